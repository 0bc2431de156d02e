import React, { ChangeEvent } from 'react';
import { QueryEditorProps } from '@grafana/data';
import {
  Combobox,
  ComboboxOption,
  InlineField,
  InlineFieldRow,
  Input,
  RadioButtonGroup,
  Stack,
  Text,
} from '@grafana/ui';

import type { DataSource } from '../datasource';
import {
  Block,
  BLOCKS,
  DensityOptions,
  DensityQuery,
  PHASE_LAYERS,
  PHASE_OPS,
  PhaseLayer,
  PhaseOp,
  QUERY_TYPE_DEFAULTS,
  QUERY_TYPES,
  QueryType,
  Resource,
  RESOURCES,
  RUN_LATEST,
  RUN_RANGE,
  Scope,
  SeriesMode,
  SCOPES,
} from '../types';
import { RunPicker } from './RunPicker';

type Props = QueryEditorProps<DataSource, DensityQuery, DensityOptions>;

/** Picker label and one-line description of every query type. */
export const QUERY_TYPE_INFO: Record<QueryType, { label: string; description: string }> = {
  packing: {
    label: 'Packing',
    description: 'Busy and total workers over time, their ratio, and a steady-window summary',
  },
  psi: {
    label: 'Pressure stall (PSI)',
    description: 'Stall % per node or worker pod for CPU, memory or I/O, with a pooled summary',
  },
  snapshots: {
    label: 'Snapshots',
    description: 'Snapshot, restore and checkpoint latency, size and throughput: the 18 snapshot keys in one row',
  },
  activeActors: { label: 'Active actors', description: 'Total and active atelets over time, with a summary' },
  workingSet: {
    label: 'Working set',
    description: 'Memory working set (total and max GiB) of nodes, workers, atelets or actors, with a summary',
  },
  oomEvents: { label: 'OOM events', description: 'OOM kills on nodes and in worker pods during the run (one row)' },
  clusterFacts: {
    label: 'Cluster facts',
    description: 'The cluster the run ran on: nodes, machine type, pods, limits (one row)',
  },
  frontier: {
    label: 'Frontier',
    description: 'Density frontier (actors per node, vCPU, GB RAM, per-pod percentiles); a trend across runs in range',
  },
  summary: {
    label: 'Summary',
    description: 'Every server_summary and trial_summary key, one row per run, to compare runs side by side',
  },
  runs: { label: 'Runs', description: 'Catalogued runs with windows, peak users and exit code, newest first' },
  tests: { label: 'Tests', description: 'Test names known to the catalogs (one column)' },
  annotations: { label: 'Annotations', description: 'Run and steady-window regions, as a table' },
  ladder: {
    label: 'Ladder',
    description: 'Load steps of a ladder run: one row per step (rates, latencies, CPU, memory, Postgres) and the knee',
  },
  phases: {
    label: 'Suspend/resume phases',
    description: 'p50/p90/p95/max ms per checkpoint and restore phase, from the stored run (density export)',
  },
};

const QUERY_TYPE_OPTIONS: Array<ComboboxOption<QueryType>> = QUERY_TYPES.map((t) => ({
  value: t,
  label: QUERY_TYPE_INFO[t].label,
  description: QUERY_TYPE_INFO[t].description,
}));

const SCOPE_OPTIONS = SCOPES.map((s: Scope) => ({ value: s, label: s === 'node' ? 'Node' : 'Pod' }));
const RESOURCE_OPTIONS = RESOURCES.map((r: Resource) => ({
  value: r,
  label: r === 'cpu' ? 'CPU' : r === 'io' ? 'I/O' : 'Memory',
}));
const BLOCK_LABELS: Record<Block, string> = {
  node: 'Node',
  worker: 'Worker',
  atelet: 'Atelet',
  actor: 'Actor',
  per_actor: 'Per actor',
};
const PHASE_OP_OPTIONS = PHASE_OPS.map((v: PhaseOp) => ({
  value: v,
  label: v === '' ? 'Both' : v === 'restore' ? 'Restore' : 'Checkpoint',
}));
const PHASE_LAYER_OPTIONS = PHASE_LAYERS.map((v: PhaseLayer) => ({
  value: v,
  label: v === '' ? 'Both layers' : v === 'atelet' ? 'atelet' : 'ateom',
}));
const BLOCK_OPTIONS = BLOCKS.map((b) => ({ value: b, label: BLOCK_LABELS[b] }));

/** The types that take a test-name/tag filter. */
const FILTERED_TYPES: QueryType[] = ['runs', 'frontier', 'summary', 'annotations'];
/** Per-type option keys; anything not listed for the new type is dropped when the type changes. */
const TYPE_KEYS: Partial<Record<QueryType, Array<keyof DensityQuery>>> = {
  psi: ['scope', 'resource', 'series'],
  workingSet: ['block'],
  phases: ['op', 'layer'],
  runs: ['testName', 'tag'],
  frontier: ['testName', 'tag'],
  summary: ['testName', 'tag'],
  annotations: ['testName', 'tag'],
};
const ALL_TYPE_KEYS: Array<keyof DensityQuery> = ['scope', 'resource', 'series', 'block', 'op', 'layer', 'testName', 'tag'];
const SERIES_OPTIONS = [
  { value: 'auto' as SeriesMode, label: 'Auto', description: 'Bands across the series above the datasource\'s maxSeries' },
  { value: 'bands' as SeriesMode, label: 'Bands', description: 'min, p50, p90, p99, max across the series and the top series' },
  { value: 'all' as SeriesMode, label: 'All', description: 'Every series (at panel resolution)' },
];

const LABEL_WIDTH = 14;

export function QueryEditor({ query, onChange, onRunQuery, datasource, range }: Props) {
  const queryType: QueryType = query.queryType ?? 'packing';

  const change = (next: DensityQuery, run = true) => {
    onChange(next);
    if (run) {
      onRunQuery();
    }
  };

  const onTypeChange = (opt: ComboboxOption<QueryType>) => {
    const next: DensityQuery = { ...query, queryType: opt.value };
    const keep: Array<keyof DensityQuery> = [
      ...(TYPE_KEYS[opt.value] ?? []),
      // `latest` may be narrowed to one test, whatever the type.
      ...(query.run === RUN_LATEST ? (['testName', 'tag'] as const) : []),
    ];
    for (const k of ALL_TYPE_KEYS) {
      if (!keep.includes(k)) {
        delete next[k];
      }
    }
    change({ ...QUERY_TYPE_DEFAULTS[opt.value], ...next });
  };

  const onText = (key: 'testName' | 'tag') => (e: ChangeEvent<HTMLInputElement>) => {
    const next: DensityQuery = { ...query };
    const v = e.currentTarget.value;
    if (v === '') {
      delete next[key];
    } else {
      next[key] = v;
    }
    change(next, false);
  };

  return (
    <Stack direction="column" gap={1}>
      <InlineFieldRow>
        <InlineField label="Query type" labelWidth={LABEL_WIDTH} htmlFor="density-query-type">
          <Combobox<QueryType>
            id="density-query-type"
            width={30}
            options={QUERY_TYPE_OPTIONS}
            value={queryType}
            onChange={onTypeChange}
          />
        </InlineField>
        <Text color="secondary" variant="bodySmall" data-testid="density-query-type-description">
          {QUERY_TYPE_INFO[queryType]?.description ?? ''}
        </Text>
      </InlineFieldRow>

      {queryType !== 'tests' && (
        <InlineFieldRow>
          <InlineField
            label="Run"
            labelWidth={LABEL_WIDTH}
            htmlFor="density-query-run"
            tooltip="A run id, the latest run, a dashboard variable such as $run, or the dashboard time range"
          >
            <RunPicker
              inputId="density-query-run"
              datasource={datasource}
              value={query.run ?? RUN_RANGE}
              range={range}
              onChange={(run) => change({ ...query, run })}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {queryType === 'psi' && (
        <InlineFieldRow>
          <InlineField label="Scope" labelWidth={LABEL_WIDTH}>
            <RadioButtonGroup<Scope>
              aria-label="Scope"
              options={SCOPE_OPTIONS}
              value={query.scope ?? 'node'}
              onChange={(scope) => change({ ...query, scope })}
            />
          </InlineField>
          <InlineField label="Resource" labelWidth={LABEL_WIDTH}>
            <RadioButtonGroup<Resource>
              aria-label="Resource"
              options={RESOURCE_OPTIONS}
              value={query.resource ?? 'cpu'}
              onChange={(resource) => change({ ...query, resource })}
            />
          </InlineField>
          <InlineField label="Series" labelWidth={LABEL_WIDTH} tooltip="How many series the panel shows">
            <RadioButtonGroup<SeriesMode>
              aria-label="Series"
              options={SERIES_OPTIONS}
              value={query.series ?? 'auto'}
              onChange={(series) => change({ ...query, series: series === 'auto' ? undefined : series })}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {queryType === 'workingSet' && (
        <InlineFieldRow>
          <InlineField
            label="Block"
            labelWidth={LABEL_WIDTH}
            tooltip="Whose working set: nodes, worker pods, atelets, actors, or per actor"
          >
            <RadioButtonGroup<Block>
              aria-label="Block"
              options={BLOCK_OPTIONS}
              value={query.block ?? 'node'}
              onChange={(block) => change({ ...query, block })}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {queryType === 'phases' && (
        <InlineFieldRow>
          <InlineField label="Op" labelWidth={LABEL_WIDTH}>
            <RadioButtonGroup<PhaseOp>
              aria-label="Op"
              options={PHASE_OP_OPTIONS}
              value={query.op ?? ''}
              onChange={(v) => {
                const next: DensityQuery = { ...query };
                if (v === '') {
                  delete next.op;
                } else {
                  next.op = v;
                }
                change(next);
              }}
            />
          </InlineField>
          <InlineField label="Layer" labelWidth={LABEL_WIDTH}>
            <RadioButtonGroup<PhaseLayer>
              aria-label="Layer"
              options={PHASE_LAYER_OPTIONS}
              value={query.layer ?? ''}
              onChange={(v) => {
                const next: DensityQuery = { ...query };
                if (v === '') {
                  delete next.layer;
                } else {
                  next.layer = v;
                }
                change(next);
              }}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {(FILTERED_TYPES.includes(queryType) || query.run === RUN_LATEST) && (
        <InlineFieldRow>
          <InlineField
            label="Test name"
            labelWidth={LABEL_WIDTH}
            htmlFor="density-query-test-name"
            tooltip="Only runs of this test ($variables allowed)"
          >
            <Input
              id="density-query-test-name"
              width={30}
              value={query.testName ?? ''}
              placeholder="any test"
              onChange={onText('testName')}
              onBlur={onRunQuery}
            />
          </InlineField>
          <InlineField
            label="Tag"
            labelWidth={8}
            htmlFor="density-query-tag"
            tooltip="Only runs with this tag, usually the commit under test"
          >
            <Input
              id="density-query-tag"
              width={24}
              value={query.tag ?? ''}
              placeholder="any tag"
              onChange={onText('tag')}
              onBlur={onRunQuery}
            />
          </InlineField>
        </InlineFieldRow>
      )}
    </Stack>
  );
}
