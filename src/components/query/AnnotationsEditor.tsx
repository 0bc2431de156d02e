import React from 'react';

import { RunField, TestFilter, TypeEditorProps } from './common';

/** annotations: the run (range: every catalogued run starting in the dashboard range), filtered by test name and tag. */
export function AnnotationsEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}
