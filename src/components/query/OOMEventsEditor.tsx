import React from 'react';

import { RunField, TestFilter, TypeEditorProps } from './common';

/** oomEvents: one row for the run; no options of its own. */
export function OOMEventsEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}
