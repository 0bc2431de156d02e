import React from 'react';

import { RunField, TestFilter, TypeEditorProps } from './common';

/** snapshots: one row for the run; no options of its own. */
export function SnapshotsEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}
