import React from 'react';

import { AlignField, RunField, TestFilter, TypeEditorProps } from './common';

/** activeActors: the run, and absolute or elapsed time. */
export function ActiveActorsEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <AlignField {...props} />
      <TestFilter {...props} />
    </>
  );
}
