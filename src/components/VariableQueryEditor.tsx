import React, { useState } from 'react';
import { QueryEditorProps } from '@grafana/data';
import { InlineField, InlineFieldRow, Input, RadioButtonGroup, Stack } from '@grafana/ui';

import type { DataSource } from '../datasource';
import { DensityOptions, DensityQuery, DensityVariableQuery, VariableQueryType } from '../types';

type Props = QueryEditorProps<DataSource, DensityQuery, DensityOptions, DensityVariableQuery>;

const KIND_OPTIONS: Array<{ value: VariableQueryType; label: string; description: string }> = [
  { value: 'runs', label: 'Runs', description: 'Value: run id; text: test name, tag and start time' },
  { value: 'tests', label: 'Test names', description: 'One value per test name' },
];

const LABEL_WIDTH = 14;

/**
 * Variable query: runs in the dashboard range (optionally of one test) or
 * the test names. Text filters are committed on blur, so a variable is not
 * re-queried on every keystroke.
 */
export function VariableQueryEditor({ query: raw, onChange }: Props) {
  // A new variable (or a hand-written dashboard) may hold no object yet.
  const query: DensityVariableQuery =
    typeof raw === 'object' && raw !== null
      ? raw
      : { refId: 'variable', queryType: raw === 'tests' ? 'tests' : 'runs' };
  const kind: VariableQueryType = query.queryType === 'tests' ? 'tests' : 'runs';
  const [testName, setTestName] = useState(query.testName ?? '');
  const [tag, setTag] = useState(query.tag ?? '');

  const emit = (next: Partial<DensityVariableQuery>) => {
    const q: DensityVariableQuery = { ...query, queryType: kind, ...next };
    for (const key of ['testName', 'tag'] as const) {
      if (!q[key] || q.queryType === 'tests') {
        delete q[key];
      }
    }
    onChange(q);
  };

  return (
    <Stack direction="column" gap={1}>
      <InlineFieldRow>
        <InlineField label="List" labelWidth={LABEL_WIDTH}>
          <RadioButtonGroup<VariableQueryType>
            aria-label="List"
            options={KIND_OPTIONS}
            value={kind}
            onChange={(queryType) => emit({ queryType, testName, tag })}
          />
        </InlineField>
      </InlineFieldRow>
      {kind === 'runs' && (
        <InlineFieldRow>
          <InlineField
            label="Test name"
            labelWidth={LABEL_WIDTH}
            htmlFor="density-variable-test-name"
            tooltip="Only runs of this test; other variables may be used"
          >
            <Input
              id="density-variable-test-name"
              width={30}
              value={testName}
              placeholder="any test"
              onChange={(e) => setTestName(e.currentTarget.value)}
              onBlur={() => emit({ testName, tag })}
            />
          </InlineField>
          <InlineField label="Tag" labelWidth={8} htmlFor="density-variable-tag">
            <Input
              id="density-variable-tag"
              width={24}
              value={tag}
              placeholder="any tag"
              onChange={(e) => setTag(e.currentTarget.value)}
              onBlur={() => emit({ testName, tag })}
            />
          </InlineField>
        </InlineFieldRow>
      )}
    </Stack>
  );
}
