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
  ALIGNED_TYPES,
  AlignMode,
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
import { RUN_LATEST_OPTION, RunPicker } from './RunPicker';

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
  gates: {
    label: 'Gates',
    description:
      "Gate verdicts of one stored run: the datasource's gates evaluated, regression gates against the baseline",
  },
  compare: {
    label: 'Compare',
    description: 'Baseline and candidate run key by key: values, delta %, direction, better / worse / same',
  },
  changePoints: {
    label: 'Change points',
    description: 'Change points across the stored runs of a test in the dashboard range, with acknowledgements',
  },
  freshness: {
    label: 'Freshness',
    description: 'Per test name and cohort: hours since the newest stored run and runs in the last 7 days (for alerts)',
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
/** The types that read no run: compare names its two runs, changePoints a test name over the range. */
const RUNLESS_TYPES: QueryType[] = ['tests', 'compare', 'changePoints'];
/** Per-type option keys; anything not listed for the new type is dropped when the type changes. */
const TYPE_KEYS: Partial<Record<QueryType, Array<keyof DensityQuery>>> = {
  packing: ['align'],
  psi: ['scope', 'resource', 'series', 'align'],
  activeActors: ['align'],
  workingSet: ['block', 'align'],
  phases: ['op', 'layer'],
  runs: ['testName', 'tag'],
  frontier: ['testName', 'tag'],
  summary: ['testName', 'tag'],
  annotations: ['testName', 'tag'],
  gates: ['baseline'],
  compare: ['baseline', 'candidate'],
  changePoints: ['testName', 'keys'],
};
const ALL_TYPE_KEYS: Array<keyof DensityQuery> = [
  'scope',
  'resource',
  'series',
  'block',
  'op',
  'layer',
  'testName',
  'tag',
  'align',
  'baseline',
  'candidate',
  'keys',
];
const ALIGN_OPTIONS = [
  { value: 'absolute' as AlignMode, label: 'Absolute', description: 'Each run at the time it ran' },
  {
    value: 'elapsed' as AlignMode,
    label: 'Elapsed',
    description: "Each run shifted so its steady start lands on the range's start: runs days apart overlay",
  },
];
/** gates: the run is one stored run or the latest (of the test name); baseline none, latest or a run. */
const GATES_RUN_OPTIONS = [RUN_LATEST_OPTION];
const NO_BASELINE = '';
const GATES_BASELINE_OPTIONS = [
  { value: NO_BASELINE, label: 'No baseline', description: 'Regression gates fail with reason "no baseline"' },
  { value: RUN_LATEST, label: 'Latest other run', description: 'The newest other run of the same test and cohort' },
];
const NO_OPTIONS: Array<ComboboxOption<string>> = [];
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
      ...(query.run === RUN_LATEST && !RUNLESS_TYPES.includes(opt.value) ? (['testName', 'tag'] as const) : []),
    ];
    for (const k of ALL_TYPE_KEYS) {
      if (!keep.includes(k)) {
        delete next[k];
      }
    }
    if (RUNLESS_TYPES.includes(opt.value)) {
      delete next.run;
    } else if (opt.value === 'gates' && (next.run === undefined || next.run === RUN_RANGE)) {
      // gates reads one stored run: the range is no run of its own.
      next.run = RUN_LATEST;
    }
    change({ ...QUERY_TYPE_DEFAULTS[opt.value], ...next });
  };

  /** Sets or (for '') removes a run-valued key and runs the query. */
  const onRunKey = (key: 'baseline' | 'candidate') => (v: string) => {
    const next: DensityQuery = { ...query };
    if (v === '') {
      delete next[key];
    } else {
      next[key] = v;
    }
    change(next);
  };

  // A run of a compare query: a stored run id or a variable, no special options.
  const compareRunField = (key: 'baseline' | 'candidate', label: string, tooltip: string) => (
    <InlineField label={label} labelWidth={LABEL_WIDTH} htmlFor={`density-query-${key}`} tooltip={tooltip}>
      <RunPicker
        inputId={`density-query-${key}`}
        datasource={datasource}
        value={query[key] ?? ''}
        range={range}
        special={NO_OPTIONS}
        placeholder={`${key} run`}
        width={40}
        onChange={onRunKey(key)}
      />
    </InlineField>
  );

  const onKeys = (e: ChangeEvent<HTMLInputElement>) => {
    const next: DensityQuery = { ...query };
    const v = e.currentTarget.value;
    if (v.trim() === '') {
      delete next.keys;
    } else {
      next.keys = v;
    }
    change(next, false);
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

  // The test-name field: a filter on most types, what changePoints searches.
  const testNameField = (tooltip: string, placeholder: string) => (
    <InlineField label="Test name" labelWidth={LABEL_WIDTH} htmlFor="density-query-test-name" tooltip={tooltip}>
      <Input
        id="density-query-test-name"
        width={30}
        value={query.testName ?? ''}
        placeholder={placeholder}
        onChange={onText('testName')}
        onBlur={onRunQuery}
      />
    </InlineField>
  );

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

      {!RUNLESS_TYPES.includes(queryType) && (
        <InlineFieldRow>
          <InlineField
            label="Run"
            labelWidth={LABEL_WIDTH}
            htmlFor="density-query-run"
            tooltip={
              queryType === 'gates'
                ? 'One stored run: a run id, the latest run (of the test name below), or a dashboard variable such as $run'
                : 'A run id, the latest run, a dashboard variable such as $run, or the dashboard time range'
            }
          >
            <RunPicker
              inputId="density-query-run"
              datasource={datasource}
              value={query.run ?? (queryType === 'gates' ? RUN_LATEST : RUN_RANGE)}
              range={range}
              special={queryType === 'gates' ? GATES_RUN_OPTIONS : undefined}
              onChange={(run) => change({ ...query, run })}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {queryType === 'gates' && (
        <InlineFieldRow>
          <InlineField
            label="Baseline"
            labelWidth={LABEL_WIDTH}
            htmlFor="density-query-baseline"
            tooltip="The run max_regression_pct gates compare against: none, the latest other run, a run id or a variable"
          >
            <RunPicker
              inputId="density-query-baseline"
              datasource={datasource}
              value={query.baseline ?? NO_BASELINE}
              range={range}
              special={GATES_BASELINE_OPTIONS}
              placeholder="No baseline"
              onChange={onRunKey('baseline')}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {queryType === 'compare' && (
        <InlineFieldRow>
          {compareRunField('baseline', 'Baseline', 'Run A: a stored run id or a dashboard variable such as $baseline')}
          {compareRunField(
            'candidate',
            'Candidate',
            'Run B: a stored run id or a dashboard variable such as $candidate'
          )}
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

      {ALIGNED_TYPES.includes(queryType) && (
        <InlineFieldRow>
          <InlineField
            label="Align"
            labelWidth={LABEL_WIDTH}
            tooltip="Elapsed overlays runs: each run's points shifted so its steady start lands on the start of the panel's time range, one frame per run"
          >
            <RadioButtonGroup<AlignMode>
              aria-label="Align"
              options={ALIGN_OPTIONS}
              value={query.align ?? 'absolute'}
              onChange={(v) => {
                const next: DensityQuery = { ...query };
                if (v === 'elapsed') {
                  next.align = v;
                } else {
                  delete next.align;
                }
                change(next);
              }}
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

      {queryType === 'changePoints' && (
        <InlineFieldRow>
          {testNameField('The test whose stored runs are searched (needed; $variables allowed)', 'test name')}
          <InlineField
            label="Keys"
            labelWidth={8}
            htmlFor="density-query-keys"
            tooltip="Comma-separated keys to search, e.g. restore_p99_s, ladder_summary.max_sustained_rps; empty: every numeric summary key"
          >
            <Input
              id="density-query-keys"
              width={48}
              value={Array.isArray(query.keys) ? query.keys.join(', ') : (query.keys ?? '')}
              placeholder="every summary key"
              onChange={onKeys}
              onBlur={onRunQuery}
            />
          </InlineField>
        </InlineFieldRow>
      )}

      {queryType !== 'changePoints' && (FILTERED_TYPES.includes(queryType) || query.run === RUN_LATEST) && (
        <InlineFieldRow>
          {testNameField('Only runs of this test ($variables allowed)', 'any test')}
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
