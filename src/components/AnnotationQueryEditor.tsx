import React, { ChangeEvent } from 'react';
import { QueryEditorProps } from '@grafana/data';
import { InlineField, InlineFieldRow, InlineSwitch, Input, Stack, Text } from '@grafana/ui';

import type { DataSource } from '../datasource';
import { DensityOptions, DensityQuery, RUN_RANGE } from '../types';
import { withKey } from './query/common';
import { RunPicker } from './RunPicker';

type Props = QueryEditorProps<DataSource, DensityQuery, DensityOptions>;

const LABEL_WIDTH = 16;

/** The annotation options that are switches: each adds its markers when on and is absent when off. */
type SwitchKey = 'ladderSteps' | 'changePoints';

/**
 * Annotation query: regions for each run (start → end, titled test name +
 * tag) and each steady window, from the same catalogs as the runs query;
 * switches add ladder step regions and change points. The query type is
 * fixed to `annotations`.
 */
export function AnnotationQueryEditor({ query, onChange, datasource, range }: Props) {
  const change = (next: Partial<DensityQuery>) => onChange({ ...query, ...next, queryType: 'annotations' });

  const annotations: DensityQuery = { ...query, queryType: 'annotations' };
  const onText = (key: 'testName' | 'tag') => (e: ChangeEvent<HTMLInputElement>) =>
    onChange(withKey(annotations, key, e.currentTarget.value));
  const onSwitch = (key: SwitchKey) => (e: React.FormEvent<HTMLInputElement>) =>
    onChange(withKey(annotations, key, e.currentTarget.checked ? true : undefined));

  return (
    <Stack direction="column" gap={1}>
      <Text color="secondary" variant="bodySmall">
        Marks each run (start to end, titled test name and tag) and its steady window as regions, tagged run, steady and
        the test name. The switches add ladder step regions and a point at each change point of the test.
      </Text>
      <InlineFieldRow>
        <InlineField label="Run" labelWidth={LABEL_WIDTH} htmlFor="density-annotation-run">
          <RunPicker
            inputId="density-annotation-run"
            datasource={datasource}
            value={query.run ?? RUN_RANGE}
            range={range}
            onChange={(run) => change({ run })}
          />
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField label="Test name" labelWidth={LABEL_WIDTH} htmlFor="density-annotation-test-name">
          <Input
            id="density-annotation-test-name"
            width={30}
            value={query.testName ?? ''}
            placeholder="any test"
            onChange={onText('testName')}
          />
        </InlineField>
        <InlineField label="Tag" labelWidth={8} htmlFor="density-annotation-tag">
          <Input
            id="density-annotation-tag"
            width={24}
            value={query.tag ?? ''}
            placeholder="any tag"
            onChange={onText('tag')}
          />
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField
          label="Ladder steps"
          labelWidth={LABEL_WIDTH}
          htmlFor="density-annotation-ladder"
          tooltip="A region per ladder step (its steady window) of stored ladder runs, tagged ladder"
        >
          <InlineSwitch
            id="density-annotation-ladder"
            value={query.ladderSteps ?? false}
            onChange={onSwitch('ladderSteps')}
          />
        </InlineField>
      </InlineFieldRow>
      <InlineFieldRow>
        <InlineField
          label="Change points"
          labelWidth={LABEL_WIDTH}
          htmlFor="density-annotation-change-points"
          tooltip="A point at the first run after each change point across the stored runs of the test name, titled key, delta % and kind; tagged change-point, regression or improvement, the key, the test name, and acknowledged when acked"
          invalid={Boolean(query.changePoints) && !query.testName}
          error="Change points need a test name"
        >
          <InlineSwitch
            id="density-annotation-change-points"
            value={query.changePoints ?? false}
            onChange={onSwitch('changePoints')}
          />
        </InlineField>
      </InlineFieldRow>
    </Stack>
  );
}
