import { ComponentType } from 'react';

import { QueryType } from '../../types';
import { ActiveActorsEditor } from './ActiveActorsEditor';
import { AnnotationsEditor } from './AnnotationsEditor';
import { ChangePointsEditor } from './ChangePointsEditor';
import { ClusterFactsEditor } from './ClusterFactsEditor';
import { TypeEditorProps } from './common';
import { CompareEditor } from './CompareEditor';
import { FreshnessEditor } from './FreshnessEditor';
import { FrontierEditor } from './FrontierEditor';
import { GatesEditor } from './GatesEditor';
import { LadderEditor } from './LadderEditor';
import { OOMEventsEditor } from './OOMEventsEditor';
import { PackingEditor } from './PackingEditor';
import { PhasesEditor } from './PhasesEditor';
import { PSIEditor } from './PSIEditor';
import { RunsEditor } from './RunsEditor';
import { SnapshotsEditor } from './SnapshotsEditor';
import { SummaryEditor } from './SummaryEditor';
import { TestsEditor } from './TestsEditor';
import { WorkingSetEditor } from './WorkingSetEditor';

/** The editor of each query type's options, below the query-type picker. */
export const EDITORS: Record<QueryType, ComponentType<TypeEditorProps>> = {
  packing: PackingEditor,
  psi: PSIEditor,
  snapshots: SnapshotsEditor,
  activeActors: ActiveActorsEditor,
  workingSet: WorkingSetEditor,
  oomEvents: OOMEventsEditor,
  clusterFacts: ClusterFactsEditor,
  frontier: FrontierEditor,
  summary: SummaryEditor,
  runs: RunsEditor,
  tests: TestsEditor,
  annotations: AnnotationsEditor,
  ladder: LadderEditor,
  phases: PhasesEditor,
  gates: GatesEditor,
  compare: CompareEditor,
  changePoints: ChangePointsEditor,
  freshness: FreshnessEditor,
};
