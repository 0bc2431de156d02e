import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { Block, BLOCKS } from '../../types';
import { AlignField, RadioField, RunField, TestFilter, TypeEditorProps } from './common';

const BLOCK_LABELS: Record<Block, string> = {
  node: 'Node',
  worker: 'Worker',
  atelet: 'Atelet',
  actor: 'Actor',
  per_actor: 'Per actor',
};
const BLOCK_OPTIONS = BLOCKS.map((b) => ({ value: b, label: BLOCK_LABELS[b] }));

/** workingSet: whose working set, and absolute or elapsed time. */
export function WorkingSetEditor(props: TypeEditorProps) {
  const { query, change } = props;
  return (
    <>
      <RunField {...props} />
      <InlineFieldRow>
        <RadioField<Block>
          label="Block"
          tooltip="Whose working set: nodes, worker pods, atelets, actors, or per actor"
          options={BLOCK_OPTIONS}
          value={query.block ?? 'node'}
          onChange={(block) => change({ ...query, block })}
        />
      </InlineFieldRow>
      <AlignField {...props} />
      <TestFilter {...props} />
    </>
  );
}
