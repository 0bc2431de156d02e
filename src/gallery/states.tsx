// The states of the plugin's editors the gallery draws: the ones a user
// meets, each with the props Grafana would pass. The browser test
// (internal/gallerytest) loads each one alone and knows what it must show.
import React, { useState } from 'react';
import { dateTime, TimeRange } from '@grafana/data';

import { AnnotationQueryEditor } from '../components/AnnotationQueryEditor';
import { ConfigEditor } from '../components/ConfigEditor';
import { QueryEditor } from '../components/QueryEditor';
import { VariableQueryEditor } from '../components/VariableQueryEditor';
import { DataSource } from '../datasource';
import { instanceSettings, settings } from '../testing/fixtures';
import { DensityQuery, DensitySecureJsonData, DensityVariableQuery } from '../types';
import { FAILING_UID, GALLERY_RUNS, GALLERY_UID } from './backend';

type EditorName = 'ConfigEditor' | 'QueryEditor' | 'VariableQueryEditor' | 'AnnotationQueryEditor';

export interface GalleryState {
  /** URL key (`?state=`) and the `data-gallery-state` of its section. */
  id: string;
  editor: EditorName;
  title: string;
  render: () => React.ReactElement;
}

/**
 * Secret values planted in secureJsonData next to the secureJsonFields that
 * say they are stored. Grafana never sends them back to the browser; they are
 * here so the browser test can prove the editor would not show them anyway.
 * (A key in secureJsonData without its field is one the user has just typed,
 * which a password input rightly holds.)
 */
export const PLANTED_SECRETS = {
  basicAuthPassword: 'PLANTED-basic-pw',
  bearerToken: 'PLANTED-bearer',
  kubeconfig: 'PLANTED-kubeconfig',
  kubernetesToken: 'PLANTED-k8s-token',
  kubernetesCACert: 'PLANTED-ca',
  httpHeaderValue1: 'PLANTED-tenant',
};

const RANGE: TimeRange = {
  from: dateTime(1699990000000),
  to: dateTime(1700110000000),
  raw: { from: 'now-7d', to: 'now' },
};

const datasource = new DataSource({ ...instanceSettings(), uid: GALLERY_UID });
const failingDatasource = new DataSource({ ...instanceSettings(), uid: FAILING_UID });

type Settings = ReturnType<typeof settings>;
type SecretKey = keyof typeof PLANTED_SECRETS;

/** Stored secrets: each key set in secureJsonFields, with its planted value in secureJsonData. */
function stored(...keys: SecretKey[]): Pick<Settings, 'secureJsonFields' | 'secureJsonData'> {
  const secureJsonFields: Record<string, boolean> = {};
  const secureJsonData: DensitySecureJsonData = {};
  for (const key of keys) {
    secureJsonFields[key] = true;
    secureJsonData[key] = PLANTED_SECRETS[key];
  }
  return { secureJsonFields, secureJsonData };
}

/** Holds the options as Grafana's datasource settings page does, so the gallery stays interactive. */
function Config({ initial }: { initial: Settings }) {
  const [options, setOptions] = useState(initial);
  return <ConfigEditor options={options} onOptionsChange={setOptions} />;
}

function Query({ initial, ds = datasource }: { initial: DensityQuery; ds?: DataSource }) {
  const [query, setQuery] = useState(initial);
  return <QueryEditor query={query} onChange={setQuery} onRunQuery={() => {}} datasource={ds} range={RANGE} />;
}

function Variable({ initial }: { initial: DensityVariableQuery }) {
  const [query, setQuery] = useState<DensityVariableQuery>(initial);
  return (
    <VariableQueryEditor
      query={query}
      onChange={(q) => setQuery(q as DensityVariableQuery)}
      onRunQuery={() => {}}
      datasource={datasource}
      range={RANGE}
    />
  );
}

function Annotation({ initial }: { initial: DensityQuery }) {
  const [query, setQuery] = useState(initial);
  return (
    <AnnotationQueryEditor
      query={query}
      onChange={setQuery}
      onRunQuery={() => {}}
      datasource={datasource}
      range={RANGE}
    />
  );
}

const [NEWEST, SWEEP_4K, SWEEP_1K] = GALLERY_RUNS.map((r) => r.id);

function query(id: string, title: string, q: Omit<DensityQuery, 'refId'>, ds?: DataSource): GalleryState {
  return { id, editor: 'QueryEditor', title, render: () => <Query initial={{ refId: 'A', ...q }} ds={ds} /> };
}

export const STATES: GalleryState[] = [
  {
    id: 'config-new',
    editor: 'ConfigEditor',
    title: 'A new datasource: every default a placeholder',
    render: () => <Config initial={settings()} />,
  },
  {
    id: 'config-configured',
    editor: 'ConfigEditor',
    title: 'Configured: bearer token, a tenant header and a pasted kubeconfig set, selectors and advanced changed',
    render: () => (
      <Config
        initial={settings({
          url: 'http://prometheus.monitoring:9090',
          jsonData: {
            resultsStore: 'gs://substrate-bench/results',
            exploreDatasourceUid: 'prometheus',
            userCountQuery: 'sum(locust_users{job="locust"})',
            runGapSeconds: 300,
            kubernetesAccess: 'kubeconfig',
            kubeContext: 'bench',
            workerNamespace: 'bench-workloads',
            ateletLagSeconds: 90,
            maxConcurrentQueries: 4,
            httpHeaderName1: 'X-Scope-OrgID',
          },
          ...stored('bearerToken', 'kubeconfig', 'httpHeaderValue1'),
        })}
      />
    ),
  },
  {
    id: 'config-basic-auth',
    editor: 'ConfigEditor',
    title: 'Basic authentication with a stored password, in-cluster Kubernetes',
    render: () => (
      <Config
        initial={settings({
          url: 'https://mimir.example/prometheus',
          basicAuth: true,
          basicAuthUser: 'grafana',
          jsonData: { kubernetesAccess: 'inCluster' },
          ...stored('basicAuthPassword'),
        })}
      />
    ),
  },
  {
    id: 'config-kubernetes-token',
    editor: 'ConfigEditor',
    title: 'Kubernetes token mode: API server URL, stored token and CA',
    render: () => (
      <Config
        initial={settings({
          url: 'http://prometheus:9090',
          jsonData: {
            kubernetesAccess: 'token',
            kubernetesURL: 'https://kubernetes.example:6443',
            liveFactsMaxAgeSeconds: 1800,
          },
          ...stored('kubernetesToken', 'kubernetesCACert'),
        })}
      />
    ),
  },
  {
    id: 'config-verdicts',
    editor: 'ConfigEditor',
    title: 'Verdicts: a gates file and an acknowledgement set',
    render: () => (
      <Config
        initial={settings({
          url: 'http://prometheus:9090',
          jsonData: {
            resultsStore: 'gs://substrate-bench/results',
            gates:
              'gates:\n  - key: cluster_packing_p50\n    min: 0.8\n  - key: restore_p99_s\n    max_regression_pct: 10\n',
            acks: '- key: restore_p99_s\n  run: sweep-1k/1700000000/c0ffee1\n  reason: slower restores expected\n',
          },
        })}
      />
    ),
  },
  query('query-packing', 'Packing over the dashboard range', { queryType: 'packing', run: 'range' }),
  query('query-packing-elapsed', 'Packing of two runs overlaid on elapsed time', {
    queryType: 'packing',
    run: [SWEEP_1K, SWEEP_4K],
    align: 'elapsed',
  }),
  query('query-psi', 'Pressure stall of worker pods, memory, one run, as bands', {
    queryType: 'psi',
    run: SWEEP_1K,
    scope: 'pod',
    resource: 'memory',
    series: 'bands',
  }),
  query('query-snapshots', 'Snapshots of the latest run of one test', {
    queryType: 'snapshots',
    run: 'latest',
    testName: 'sweep-4k',
  }),
  query('query-activeActors', 'Active actors of the run a dashboard variable picks', {
    queryType: 'activeActors',
    run: '$run',
  }),
  query('query-workingSet', 'Working set per actor', { queryType: 'workingSet', run: SWEEP_4K, block: 'per_actor' }),
  query('query-oomEvents', 'OOM events over the dashboard range', { queryType: 'oomEvents', run: 'range' }),
  query('query-clusterFacts', 'Cluster facts of a run Prometheus discovered', {
    queryType: 'clusterFacts',
    run: NEWEST,
  }),
  query('query-frontier', 'Frontier trend of one test and tag', {
    queryType: 'frontier',
    run: 'range',
    testName: 'sweep-1k',
    tag: 'c0ffee1',
  }),
  query('query-summary', 'Summary of two runs side by side (a multi-value variable)', {
    queryType: 'summary',
    run: [SWEEP_1K, SWEEP_4K],
  }),
  query('query-runs', 'Runs of one test', { queryType: 'runs', run: 'range', testName: 'sweep-1k' }),
  query('query-tests', 'Test names (no run)', { queryType: 'tests' }),
  query('query-annotations', 'Annotations as a table', { queryType: 'annotations', run: 'range' }),
  query('query-gates', 'Gates of the latest run of one test against the latest other run', {
    queryType: 'gates',
    run: 'latest',
    testName: 'sweep-1k',
    baseline: 'latest',
  }),
  query('query-compare', 'Compare two runs: a listed baseline and a variable candidate', {
    queryType: 'compare',
    baseline: SWEEP_1K,
    candidate: '$run',
  }),
  query('query-changePoints', 'Change points of one test, two keys', {
    queryType: 'changePoints',
    testName: 'sweep-1k',
    keys: 'restore_p99_s, cluster_packing_p50',
  }),
  query('query-summary-numeric', 'Summary as numbers for an alert rule: two keys of the latest nightly', {
    queryType: 'summary',
    run: 'latest',
    testName: 'nightly',
    format: 'numeric',
    keys: 'cluster_packing_p50, restore_p99_s',
  }),
  query('query-gates-numeric', 'Gates as numbers with the run labels', {
    queryType: 'gates',
    run: 'latest',
    testName: 'nightly',
    format: 'numeric',
    labels: 'run',
  }),
  query('query-ladder', 'Ladder steps of one run as a table', { queryType: 'ladder', run: SWEEP_4K }),
  query('query-freshness', 'Freshness: hours since each test last ran (no run, no range)', {
    queryType: 'freshness',
  }),
  query('query-run-picker', 'The run picker, listed from GET /runs', { queryType: 'packing', run: SWEEP_1K }),
  query(
    'query-runs-error',
    'The run picker when listing runs fails',
    { queryType: 'packing', run: 'range' },
    failingDatasource
  ),
  {
    id: 'variable-runs',
    editor: 'VariableQueryEditor',
    title: 'Variable: runs of one test',
    render: () => <Variable initial={{ refId: 'variable', queryType: 'runs', testName: 'sweep-1k' }} />,
  },
  {
    id: 'variable-tests',
    editor: 'VariableQueryEditor',
    title: 'Variable: test names',
    render: () => <Variable initial={{ refId: 'variable', queryType: 'tests' }} />,
  },
  {
    id: 'annotation',
    editor: 'AnnotationQueryEditor',
    title: 'Annotations: runs and steady windows of one test',
    render: () => (
      <Annotation initial={{ refId: 'Anno', queryType: 'annotations', run: 'range', testName: 'sweep-1k' }} />
    ),
  },
  {
    id: 'annotation-change-points',
    editor: 'AnnotationQueryEditor',
    title: 'Annotations: runs and the change points of one test',
    render: () => (
      <Annotation
        initial={{ refId: 'Anno', queryType: 'annotations', run: 'range', testName: 'nightly', changePoints: true }}
      />
    ),
  },
];
