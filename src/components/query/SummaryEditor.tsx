import React from 'react';

import { NumericOptions, RunField, TestFilter, TypeEditorProps } from './common';

/** summary: one row per run, or numeric frames per (run, key) for alert rules. */
export function SummaryEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <NumericOptions
        {...props}
        keysTooltip="Summary keys answered, comma-separated, e.g. cluster_packing_p50, restore_p99_s; empty: every numeric key"
        keysPlaceholder="every numeric key"
      />
      <TestFilter {...props} />
    </>
  );
}
