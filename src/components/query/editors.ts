import { ComponentType } from 'react';

import { QueryType } from '../../types';
import { ChangePointsEditor } from './ChangePointsEditor';
import { TypeEditorProps } from './common';
import { CompareEditor } from './CompareEditor';
import { FreshnessEditor } from './FreshnessEditor';
import { GatesEditor } from './GatesEditor';
import { LadderEditor } from './LadderEditor';
import { PhasesEditor } from './PhasesEditor';
import { PSIEditor } from './PSIEditor';
import { AlignedRunEditor, RunEditor } from './RunEditor';
import { SummaryEditor } from './SummaryEditor';
import { TestsEditor } from './TestsEditor';
import { WorkingSetEditor } from './WorkingSetEditor';

/** The editor of each query type's options, below the query-type picker. */
export const EDITORS: Record<QueryType, ComponentType<TypeEditorProps>> = {
  packing: AlignedRunEditor,
  psi: PSIEditor,
  snapshots: RunEditor,
  activeActors: AlignedRunEditor,
  workingSet: WorkingSetEditor,
  oomEvents: RunEditor,
  clusterFacts: RunEditor,
  frontier: RunEditor,
  summary: SummaryEditor,
  runs: RunEditor,
  tests: TestsEditor,
  annotations: RunEditor,
  ladder: LadderEditor,
  phases: PhasesEditor,
  gates: GatesEditor,
  compare: CompareEditor,
  changePoints: ChangePointsEditor,
  freshness: FreshnessEditor,
};
