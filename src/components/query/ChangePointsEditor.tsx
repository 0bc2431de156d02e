import React, { ChangeEvent } from 'react';
import { InlineField, InlineFieldRow, Input } from '@grafana/ui';

import { KeysField, TestNameField, TypeEditorProps, withKey } from './common';

/** changePoints: the test whose stored runs are searched, the keys, and the runs a segment needs. */
export function ChangePointsEditor(props: TypeEditorProps) {
  const { query, change, onRunQuery } = props;
  return (
    <InlineFieldRow>
      <TestNameField
        {...props}
        tooltip="The test whose stored runs are searched (needed; $variables allowed)"
        placeholder="test name"
      />
      <KeysField
        {...props}
        tooltip="Comma-separated keys to search, e.g. restore_p99_s, ladder_summary.max_sustained_rps; empty: every numeric summary key"
        placeholder="every summary key"
      />
      <InlineField
        label="Min runs"
        labelWidth={10}
        htmlFor="density-query-min-runs"
        tooltip="Runs a segment needs before a change point is judged; empty: 3; 1 judges the newest run alone"
      >
        <Input
          id="density-query-min-runs"
          type="number"
          min={1}
          width={10}
          value={query.minRuns ?? ''}
          placeholder="3"
          onChange={(e: ChangeEvent<HTMLInputElement>) => {
            const n = Number(e.currentTarget.value);
            const v = e.currentTarget.value.trim() === '' || !Number.isInteger(n) || n < 1 ? undefined : n;
            change(withKey(query, 'minRuns', v), false);
          }}
          onBlur={onRunQuery}
        />
      </InlineField>
    </InlineFieldRow>
  );
}
