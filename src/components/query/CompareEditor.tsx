import React from 'react';
import { ComboboxOption, InlineFieldRow } from '@grafana/ui';

import { RunPickerField, TypeEditorProps, withKey } from './common';

const NO_OPTIONS: Array<ComboboxOption<string>> = [];

/** compare: two runs, each a stored run id or a variable, no special options. */
export function CompareEditor({ query, change, datasource, range }: TypeEditorProps) {
  const runField = (key: 'baseline' | 'candidate', label: string, tooltip: string) => (
    <RunPickerField
      label={label}
      inputId={`density-query-${key}`}
      tooltip={tooltip}
      datasource={datasource}
      value={query[key] ?? ''}
      range={range}
      special={NO_OPTIONS}
      placeholder={`${key} run`}
      width={40}
      onChange={(v) => change(withKey(query, key, v))}
    />
  );
  return (
    <InlineFieldRow>
      {runField('baseline', 'Baseline', 'Run A: a stored run id or a dashboard variable such as $baseline')}
      {runField('candidate', 'Candidate', 'Run B: a stored run id or a dashboard variable such as $candidate')}
    </InlineFieldRow>
  );
}
