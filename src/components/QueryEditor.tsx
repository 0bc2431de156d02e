import React from 'react';
import { QueryEditorProps } from '@grafana/data';
import { Combobox, ComboboxOption, InlineField, InlineFieldRow, Stack, Text } from '@grafana/ui';

import type { DataSource } from '../datasource';
import {
  DensityOptions,
  DensityQuery,
  FILTERED_TYPES,
  QUERY_TYPE_DEFAULTS,
  QUERY_TYPE_KEYS,
  QUERY_TYPES,
  QueryType,
  RUN_LATEST,
  RUN_RANGE,
  RUNLESS_TYPES,
} from '../types';
import { LABEL_WIDTH } from './query/common';
import { EDITORS } from './query/editors';

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

/** Every per-type key: anything the new type does not take is dropped when the type changes. */
const ALL_TYPE_KEYS: Array<keyof DensityQuery> = [
  ...new Set<keyof DensityQuery>(['testName', 'tag', ...Object.values(QUERY_TYPE_KEYS).flat()]),
];

/**
 * The query editor: the query-type picker and the chosen type's editor
 * (src/components/query/, chosen from EDITORS). A type change keeps
 * only the keys the new type takes and writes its defaults.
 */
export function QueryEditor({ query, onChange, onRunQuery, datasource, range }: Props) {
  const queryType: QueryType = query.queryType ?? 'packing';
  const TypeEditor = EDITORS[queryType] ?? EDITORS.packing;

  const change = (next: DensityQuery, run = true) => {
    onChange(next);
    if (run) {
      onRunQuery();
    }
  };

  const onTypeChange = (opt: ComboboxOption<QueryType>) => {
    const t = opt.value;
    const next: DensityQuery = { ...query, queryType: t };
    const runless = RUNLESS_TYPES.includes(t);
    const keep: Array<keyof DensityQuery> = [
      ...QUERY_TYPE_KEYS[t],
      ...(FILTERED_TYPES.includes(t) ? (['testName', 'tag'] as const) : []),
      // `latest` may be narrowed to one test, whatever the type.
      ...(query.run === RUN_LATEST && !runless ? (['testName', 'tag'] as const) : []),
    ];
    for (const k of ALL_TYPE_KEYS) {
      if (!keep.includes(k)) {
        delete next[k];
      }
    }
    if (runless) {
      delete next.run;
    } else if (t === 'gates' && (next.run === undefined || next.run === RUN_RANGE)) {
      // gates reads one stored run: the range is no run of its own.
      next.run = RUN_LATEST;
    }
    change({ ...QUERY_TYPE_DEFAULTS[t], ...next });
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
      <TypeEditor query={query} change={change} onRunQuery={onRunQuery} datasource={datasource} range={range} />
    </Stack>
  );
}
