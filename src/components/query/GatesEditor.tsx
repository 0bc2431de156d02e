import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { RUN_LATEST } from '../../types';
import { RUN_LATEST_OPTION } from '../RunPicker';
import { NumericOptions, RunField, RunPickerField, TestFilter, TypeEditorProps, withKey } from './common';

/** gates: the run is one stored run or the latest (of the test name); baseline none, latest or a run. */
const GATES_RUN_OPTIONS = [RUN_LATEST_OPTION];
const NO_BASELINE = '';
const GATES_BASELINE_OPTIONS = [
  { value: NO_BASELINE, label: 'No baseline', description: 'Regression gates fail with reason "no baseline"' },
  { value: RUN_LATEST, label: 'Latest other run', description: 'The newest other run of the same test and cohort' },
];

/** gates: one stored run's verdicts, against an optional baseline; numeric for alert rules. */
export function GatesEditor(props: TypeEditorProps) {
  const { query, change, datasource, range } = props;
  return (
    <>
      <RunField
        {...props}
        special={GATES_RUN_OPTIONS}
        fallback={RUN_LATEST}
        tooltip="One stored run: a run id, the latest run (of the test name below), or a dashboard variable such as $run"
      />
      <InlineFieldRow>
        <RunPickerField
          label="Baseline"
          inputId="density-query-baseline"
          tooltip="The run max_regression_pct gates compare against: none, the latest other run, a run id or a variable"
          datasource={datasource}
          value={query.baseline ?? NO_BASELINE}
          range={range}
          special={GATES_BASELINE_OPTIONS}
          placeholder="No baseline"
          onChange={(v) => change(withKey(query, 'baseline', v))}
        />
      </InlineFieldRow>
      <NumericOptions
        {...props}
        keysTooltip="Gate keys answered, comma-separated; empty: every gate and gates_failed"
        keysPlaceholder="every gate"
      />
      <TestFilter {...props} />
    </>
  );
}
