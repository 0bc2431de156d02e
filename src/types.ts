import { DataSourceJsonData } from '@grafana/data';
import { DataQuery } from '@grafana/schema';

// The query model, settings keys and defaults of docs/query-types.md.
// Names here are the wire names: provisioning files, dashboards and the Go
// backend (pkg/plugin) depend on them, so they never get renamed for style.

/** Every query type the backend mux serves, in the order the picker lists them. */
export const QUERY_TYPES = [
  'packing',
  'psi',
  'snapshots',
  'activeActors',
  'workingSet',
  'oomEvents',
  'clusterFacts',
  'frontier',
  'summary',
  'runs',
  'tests',
  'annotations',
  'ladder',
  'phases',
  'gates',
  'compare',
  'changePoints',
  'freshness',
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

/** The types that read no run: compare names its two runs, changePoints a test name over the range, freshness every test. */
export const RUNLESS_TYPES: QueryType[] = ['tests', 'compare', 'changePoints', 'freshness'];
/** The types that always take a test-name/tag filter (any other type that reads a run takes it for run latest). */
export const FILTERED_TYPES: QueryType[] = ['runs', 'frontier', 'summary', 'annotations'];
/**
 * The option keys of each query type besides run, testName and tag (which
 * every type that reads a run takes). Checked against the schema
 * (src/schema/, generated from pkg/plugin/schema) by src/schema.test.ts; the
 * editor drops keys the new type does not take when the type changes.
 */
export const QUERY_TYPE_KEYS: Record<QueryType, Array<keyof DensityQuery>> = {
  packing: ['align'],
  psi: ['scope', 'resource', 'series', 'align'],
  snapshots: [],
  activeActors: ['align'],
  workingSet: ['block', 'align'],
  oomEvents: [],
  clusterFacts: [],
  frontier: [],
  summary: ['format', 'keys', 'labels'],
  runs: [],
  tests: [],
  annotations: ['ladderSteps', 'changePoints', 'keys', 'minRuns'],
  ladder: ['format', 'keys', 'labels'],
  phases: ['op', 'layer'],
  gates: ['baseline', 'format', 'keys', 'labels'],
  compare: ['baseline', 'candidate'],
  changePoints: ['testName', 'keys', 'minRuns'],
  freshness: [],
};

/** summary, gates, ladder: tables (the default) or numeric frames for alert rules. */
export const FORMATS = ['table', 'numeric'] as const;
export type Format = (typeof FORMATS)[number];
/** Numeric frames: only the stable labels (absent), or also run and tag. */
export const LABEL_MODES = ['run'] as const;
export type LabelMode = (typeof LABEL_MODES)[number];

export const SCOPES = ['node', 'pod'] as const;
export type Scope = (typeof SCOPES)[number];

export const RESOURCES = ['cpu', 'memory', 'io'] as const;
export type Resource = (typeof RESOURCES)[number];

/** psi: how many series a panel shows: bands above maxSeries (auto), always bands, or every series. */
export const SERIES_MODES = ['auto', 'bands', 'all'] as const;
export type SeriesMode = (typeof SERIES_MODES)[number];

/** phases: the op and layer filters ('' is all). */
export const PHASE_OPS = ['', 'restore', 'checkpoint'] as const;
export type PhaseOp = (typeof PHASE_OPS)[number];
export const PHASE_LAYERS = ['', 'atelet', 'ateom'] as const;
export type PhaseLayer = (typeof PHASE_LAYERS)[number];

/** Per-run time series: absolute times, or each run's steady start on the range's start (verdicts.md "Overlaying runs"). */
export const ALIGN_MODES = ['absolute', 'elapsed'] as const;
export type AlignMode = (typeof ALIGN_MODES)[number];

export const BLOCKS = ['node', 'worker', 'atelet', 'actor', 'per_actor'] as const;
export type Block = (typeof BLOCKS)[number];

/** `run: "range"`: the dashboard time range is the run window (per-run types) or selects the catalogued runs starting in it (runs, frontier, summary). */
export const RUN_RANGE = 'range';
/** `run: "latest"`: the newest run across catalogs (optionally of one test name). */
export const RUN_LATEST = 'latest';

export interface DensityQuery extends DataQuery {
  queryType?: QueryType;
  /** A run id, `latest`, `range`, a `$variable`, or a list of ids (a multi-value variable). */
  run?: string | string[];
  /** psi only. */
  scope?: Scope;
  /** psi only. */
  resource?: Resource;
  /** psi only: bands across the series above maxSeries (the default), always bands, or every series. */
  series?: SeriesMode;
  /** workingSet only. */
  block?: Block;
  /** phases only: restore or checkpoint; absent is both. */
  op?: Exclude<PhaseOp, ''>;
  /** phases only: atelet or ateom; absent is both. */
  layer?: Exclude<PhaseLayer, ''>;
  /** Filter for runs, frontier, summary and annotations. */
  testName?: string;
  /** Filter for runs, frontier, summary and annotations. */
  tag?: string;
  /** annotations only: a region per ladder step of stored ladder runs. */
  ladderSteps?: boolean;
  /** annotations only: a point at each change point across the stored runs of testName. */
  changePoints?: boolean;
  /** packing, psi, activeActors, workingSet: elapsed overlays runs (each run's steady start on the range's start); absent is absolute. */
  align?: Exclude<AlignMode, 'absolute'>;
  /** compare: the baseline run id (or a variable); gates: the run regression gates compare against (an id, latest, or absent for none). */
  baseline?: string;
  /** compare only: the candidate run id (or a variable). */
  candidate?: string;
  /** changePoints, annotations: the keys searched (comma-separated or a list), absent is every numeric summary key; summary, gates, ladder with format numeric: the keys answered. */
  keys?: string | string[];
  /** changePoints, annotations: runs a segment needs before a change point is judged (absent: 3). */
  minRuns?: number;
  /** summary, gates, ladder: numeric gives one numeric-multi frame per (run, key) for alert rules; absent is table. */
  format?: Format;
  /** summary, gates, ladder with format numeric: run adds the run and tag labels; absent: only the stable labels. */
  labels?: LabelMode;
}

/** The query a new panel starts with: packing over the dashboard range. */
export const DEFAULT_QUERY: Partial<DensityQuery> = {
  queryType: 'packing',
  run: RUN_RANGE,
};

/**
 * Options a query type gets when the user picks it in the editor. They are
 * written into the query (not left to backend defaults) so a saved dashboard
 * says what it shows.
 */
export const QUERY_TYPE_DEFAULTS: Partial<Record<QueryType, Partial<DensityQuery>>> = {
  psi: { scope: 'node', resource: 'cpu' },
  workingSet: { block: 'node' },
};

/** The variable query model (runs doubles as the variable query; tests is the second one). */
export type VariableQueryType = 'runs' | 'tests';
export interface DensityVariableQuery extends DataQuery {
  queryType: VariableQueryType;
  testName?: string;
  tag?: string;
}
export const DEFAULT_VARIABLE_QUERY: Omit<DensityVariableQuery, 'refId'> = { queryType: 'runs' };

export type KubernetesAccess = 'off' | 'inCluster' | 'kubeconfig' | 'token';

/** jsonData of a datasource instance. Unset keys mean "use the default below". */
export interface DensityOptions extends DataSourceJsonData {
  /** Results store URL: a local path, file://, gs://, s3:// or azblob://. */
  resultsStore?: string;
  discoverRuns?: boolean;
  userCountQuery?: string;
  runGapSeconds?: number;
  ateletLagSeconds?: number;
  timeoutSeconds?: number;
  maxConcurrentQueries?: number;
  workerPool?: string;
  workerNamespace?: string;
  workerContainer?: string;
  workerPodRegex?: string;
  ateletNamespace?: string;
  ateletContainer?: string;
  kubernetesAccess?: KubernetesAccess;
  kubeconfigPath?: string;
  kubeContext?: string;
  kubernetesURL?: string;
  liveFactsMaxAgeSeconds?: number;
  cacheEntries?: number;
  maxResponseBytes?: number;
  /** Longest dashboard range read from Prometheus, in days (default 31). */
  maxRangeDays?: number;
  /** Stored runs one query reads; of more, the newest (default 2,000). */
  maxRunsPerQuery?: number;
  /** Parsed rows of stored runs kept per datasource, in MiB (default 256; 0 keeps none). */
  storedRunCacheMiB?: number;
  /** Read a stored run's numbers from its artifacts (default true). */
  preferStored?: boolean;
  /** Per-node/per-pod series a PSI panel shows before it shows bands (default 50). */
  maxSeries?: number;
  /** Series with the highest peak shown with the bands (default 10). */
  topSeries?: number;
  /** A gates file (YAML, verdicts.md) the gates query evaluates. */
  gates?: string;
  /** Change-point acknowledgements (YAML list of {key, run, reason}), added to the store's acks.yaml. */
  acks?: string;
  /** A ladder profile (YAML list of {key, query, reduce}, ladder-steps.md) replacing the built-in one for ladders evaluated from logs.txt. */
  ladderProfile?: string;
  /** The Grafana uid of a Prometheus datasource for Explore links from runs; unset: no Explore links. */
  exploreDatasourceUid?: string;
  // Standard Grafana HTTP client options the SDK reads (TLS, forwarded cookies).
  tlsAuth?: boolean;
  tlsAuthWithCACert?: boolean;
  tlsSkipVerify?: boolean;
  serverName?: string;
  /** Custom headers (e.g. X-Scope-OrgID): name N here, value N in secureJsonData. */
  [headerName: `httpHeaderName${number}`]: string | undefined;
}

/** secureJsonData: write-only from the browser; Grafana only reports which keys are set. */
export interface DensitySecureJsonData {
  basicAuthPassword?: string;
  bearerToken?: string;
  /** A pasted kubeconfig, for kubeconfig mode without a path. */
  kubeconfig?: string;
  kubernetesToken?: string;
  kubernetesCACert?: string;
  tlsCACert?: string;
  tlsClientCert?: string;
  tlsClientKey?: string;
  [headerValue: `httpHeaderValue${number}`]: string | undefined;
}

const MiB = 1024 * 1024;

/**
 * Defaults of every setting (server-telemetry.md, runs.md, cluster-facts.md,
 * datasource.md). The editor shows them as placeholders and never writes them
 * into jsonData: the backend applies the same values to unset keys.
 */
export const DEFAULTS = {
  discoverRuns: true,
  userCountQuery: 'sum(locust_users)',
  runGapSeconds: 120,
  ateletLagSeconds: 70,
  /** Without timeoutSeconds an instant query gets 5 s and a range query 8 s; the one setting overrides both. */
  timeoutInstantSeconds: 5,
  timeoutRangeSeconds: 8,
  maxConcurrentQueries: 8,
  workerPool: 'benchmark-ateom',
  workerNamespace: 'benchmark-workloads',
  workerContainer: 'ateom',
  workerPodRegex: 'benchmark-ateom.*',
  ateletNamespace: 'ate-system',
  ateletContainer: 'atelet',
  /**
   * Kubernetes is off until someone opts in: a Grafana server rarely runs
   * with cluster credentials, and "off" makes every Kubernetes fact null with
   * a notice rather than an error on each query.
   */
  kubernetesAccess: 'off' as KubernetesAccess,
  liveFactsMaxAgeSeconds: 3600,
  cacheEntries: 256,
  maxResponseBytes: 64 * MiB,
  maxRangeDays: 31,
  maxRunsPerQuery: 2000,
  storedRunCacheMiB: 256,
  preferStored: true,
  maxSeries: 50,
  topSeries: 10,
} as const;

export const BYTES_PER_MIB = MiB;

/** One run as listed by the backend resource `GET /runs` (snake_case as in the runs frame). */
export interface RunInfo {
  id: string;
  test_name?: string;
  tag?: string;
  /** Unix seconds. */
  start?: number;
  end?: number;
  steady_start?: number;
  steady_end?: number;
  peak_users?: number | null;
  locust_exit_code?: number | null;
}
