import React from 'react';

import { RunField, TestFilter, TypeEditorProps } from './common';

/** clusterFacts: one row for the run; no options of its own. */
export function ClusterFactsEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}
