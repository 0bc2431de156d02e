import React from 'react';

import { RunField, TestFilter, TypeEditorProps } from './common';

/** runs: the run (range: every catalogued run starting in the dashboard range), filtered by test name and tag. */
export function RunsEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}
