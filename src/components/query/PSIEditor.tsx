import React from 'react';
import { InlineFieldRow } from '@grafana/ui';

import { Resource, RESOURCES, Scope, SCOPES, SeriesMode } from '../../types';
import { AlignField, RadioField, RunField, TestFilter, TypeEditorProps } from './common';

const SCOPE_OPTIONS = SCOPES.map((s: Scope) => ({ value: s, label: s === 'node' ? 'Node' : 'Pod' }));
const RESOURCE_OPTIONS = RESOURCES.map((r: Resource) => ({
  value: r,
  label: r === 'cpu' ? 'CPU' : r === 'io' ? 'I/O' : 'Memory',
}));
const SERIES_OPTIONS = [
  {
    value: 'auto' as SeriesMode,
    label: 'Auto',
    description: "Bands across the series above the datasource's maxSeries",
  },
  {
    value: 'bands' as SeriesMode,
    label: 'Bands',
    description: 'min, p50, p90, p99, max across the series and the top series',
  },
  { value: 'all' as SeriesMode, label: 'All', description: 'Every series (at panel resolution)' },
];

/** psi: node or pod, CPU, memory or I/O, and how many series. */
export function PSIEditor(props: TypeEditorProps) {
  const { query, change } = props;
  return (
    <>
      <RunField {...props} />
      <InlineFieldRow>
        <RadioField<Scope>
          label="Scope"
          options={SCOPE_OPTIONS}
          value={query.scope ?? 'node'}
          onChange={(scope) => change({ ...query, scope })}
        />
        <RadioField<Resource>
          label="Resource"
          options={RESOURCE_OPTIONS}
          value={query.resource ?? 'cpu'}
          onChange={(resource) => change({ ...query, resource })}
        />
        <RadioField<SeriesMode>
          label="Series"
          tooltip="How many series the panel shows"
          options={SERIES_OPTIONS}
          value={query.series ?? 'auto'}
          onChange={(series) => change({ ...query, series: series === 'auto' ? undefined : series })}
        />
      </InlineFieldRow>
      <AlignField {...props} />
      <TestFilter {...props} />
    </>
  );
}
