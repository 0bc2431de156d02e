import React from 'react';

import { AlignField, RunField, TestFilter, TypeEditorProps } from './common';

/**
 * The types with no options of their own: the run and the test filter.
 * snapshots, oomEvents, clusterFacts read one run; runs, frontier and
 * annotations also every catalogued run starting in the dashboard range.
 */
export function RunEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <TestFilter {...props} />
    </>
  );
}

/** packing, activeActors: the run, and absolute or elapsed time. */
export function AlignedRunEditor(props: TypeEditorProps) {
  return (
    <>
      <RunField {...props} />
      <AlignField {...props} />
      <TestFilter {...props} />
    </>
  );
}
