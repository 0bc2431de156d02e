import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { PHASE_LAYERS, PHASE_OPS, PhaseLayer, PhaseOp } from '../../types';
import { RadioField, RunField, TestFilter, TypeEditorProps, withKey } from './common';

const PHASE_OP_OPTIONS = PHASE_OPS.map((v: PhaseOp) => ({
  value: v,
  label: v === '' ? 'Both' : v === 'restore' ? 'Restore' : 'Checkpoint',
}));
const PHASE_LAYER_OPTIONS = PHASE_LAYERS.map((v: PhaseLayer) => ({
  value: v,
  label: v === '' ? 'Both layers' : v === 'atelet' ? 'atelet' : 'ateom',
}));

/** phases: the op and layer filters ('' is both). */
export function PhasesEditor(props: TypeEditorProps) {
  const { query, change } = props;
  return (
    <>
      <RunField {...props} />
      <InlineFieldRow>
        <RadioField<PhaseOp>
          label="Op"
          options={PHASE_OP_OPTIONS}
          value={query.op ?? ''}
          onChange={(v) => change(withKey(query, 'op', v))}
        />
        <RadioField<PhaseLayer>
          label="Layer"
          options={PHASE_LAYER_OPTIONS}
          value={query.layer ?? ''}
          onChange={(v) => change(withKey(query, 'layer', v))}
        />
      </InlineFieldRow>
      <TestFilter {...props} />
    </>
  );
}
