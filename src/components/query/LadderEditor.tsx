import React from 'react';

import { NumericOptions, RunField, TestFilter, TypeEditorProps } from './common';

/** ladder: one row per step, or numeric frames per (step, key) for alert rules. */
export function LadderEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <NumericOptions
        {...props}
        keysTooltip="Step keys answered, comma-separated, e.g. resume_rps, resume_p99_ms; empty: every numeric key"
        keysPlaceholder="every numeric key"
      />
      <TestFilter {...props} />
    </>
  );
}
