import React from 'react';

import { AlignField, RunField, TestFilter, TypeEditorProps } from './common';

/** packing: the run, and absolute or elapsed time. */
export function PackingEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <AlignField {...props} />
      <TestFilter {...props} />
    </>
  );
}
