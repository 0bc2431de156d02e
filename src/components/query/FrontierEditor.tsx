import React from 'react';

import { RunField, TestFilter, TypeEditorProps } from './common';

/** frontier: the run (range: every catalogued run starting in the dashboard range), filtered by test name and tag. */
export function FrontierEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}
