import { readFileSync } from 'fs';
import { join } from 'path';
import { DataSourceJsonData } from '@grafana/data';

import {
  ALIGN_MODES,
  BLOCKS,
  DEFAULT_QUERY,
  DEFAULTS,
  DensityOptions,
  DensitySecureJsonData,
  FORMATS,
  LABEL_MODES,
  PHASE_LAYERS,
  PHASE_OPS,
  QUERY_TYPE_DEFAULTS,
  QUERY_TYPE_KEYS,
  QUERY_TYPES,
  QueryType,
  RESOURCES,
  RUNLESS_TYPES,
  SCOPES,
  SERIES_MODES,
} from './types';

// The committed schema (generated from pkg/plugin/schema by
// `go test ./pkg/plugin/schema -run TestQuerySchema -update`) is the one
// description of the query model and the settings: the frontend's types and
// defaults must say the same.

interface Property {
  enum?: string[];
  default?: unknown;
}
interface QueryTypeDefinition {
  metadata: { name: string };
  spec: { schema: { properties?: Record<string, Property>; required?: string[] } };
}

const dir = join(__dirname, 'schema', 'v0alpha1');
const read = <T>(name: string): T => JSON.parse(readFileSync(join(dir, name), 'utf8')) as T;
const queryTypes = read<{ items: QueryTypeDefinition[] }>('query.types.json').items;
const settings = read<{
  spec: { properties: { jsonData: { properties: Record<string, Property> } } };
  secureValues: Array<{ key: string }>;
}>('settings.json');

const props = (t: QueryType): Record<string, Property> => {
  const def = queryTypes.find((d) => d.metadata.name === t);
  if (!def) {
    throw new Error(`query type ${t} is not in the schema`);
  }
  return def.spec.schema.properties ?? {};
};
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

describe('the frontend query model matches the committed schema', () => {
  it('lists the same query types in the same order', () => {
    expect(queryTypes.map((d) => d.metadata.name)).toEqual([...QUERY_TYPES]);
  });

  it.each([...QUERY_TYPES])('%s takes the keys the schema names', (t) => {
    const keys: string[] = [...QUERY_TYPE_KEYS[t]];
    if (!RUNLESS_TYPES.includes(t)) {
      keys.push('run', 'testName', 'tag');
    }
    expect(sorted(keys)).toEqual(sorted(Object.keys(props(t))));
  });

  it('has the schema enumerations', () => {
    const enumOf = (t: QueryType, key: string) => props(t)[key]?.enum;
    expect(enumOf('psi', 'scope')).toEqual([...SCOPES]);
    expect(enumOf('psi', 'resource')).toEqual([...RESOURCES]);
    // 'auto' is the editor's name for an absent series key.
    expect(enumOf('psi', 'series')).toEqual(SERIES_MODES.filter((m) => m !== 'auto'));
    expect(enumOf('packing', 'align')).toEqual([...ALIGN_MODES]);
    expect(enumOf('workingSet', 'block')).toEqual([...BLOCKS]);
    // '' is the editor's name for an absent filter.
    expect(enumOf('phases', 'op')).toEqual(PHASE_OPS.filter((v) => v !== ''));
    expect(enumOf('phases', 'layer')).toEqual(PHASE_LAYERS.filter((v) => v !== ''));
    for (const t of ['summary', 'gates', 'ladder'] as const) {
      expect(enumOf(t, 'format')).toEqual([...FORMATS]);
      expect(enumOf(t, 'labels')).toEqual([...LABEL_MODES]);
    }
  });

  it('has the schema defaults', () => {
    expect(props('packing').run.default).toBe(DEFAULT_QUERY.run);
    for (const [t, defaults] of Object.entries(QUERY_TYPE_DEFAULTS)) {
      for (const [k, v] of Object.entries(defaults)) {
        expect([t, k, props(t as QueryType)[k]?.default]).toEqual([t, k, v]);
      }
    }
    expect(props('summary').format.default).toBe('table');
  });

  it('requires what the backend requires', () => {
    const required = (t: QueryType) => queryTypes.find((d) => d.metadata.name === t)?.spec.schema.required ?? [];
    expect(sorted(required('compare'))).toEqual(['baseline', 'candidate']);
    expect(required('changePoints')).toEqual(['testName']);
  });
});

/** Every jsonData key of DensityOptions: tsc fails when a key is missing here or unknown there. */
const JSON_DATA_KEYS = {
  resultsStore: true,
  discoverRuns: true,
  userCountQuery: true,
  runGapSeconds: true,
  ateletLagSeconds: true,
  timeoutSeconds: true,
  maxConcurrentQueries: true,
  workerPool: true,
  workerNamespace: true,
  workerContainer: true,
  workerPodRegex: true,
  ateletNamespace: true,
  ateletContainer: true,
  kubernetesAccess: true,
  kubeconfigPath: true,
  kubeContext: true,
  kubernetesURL: true,
  liveFactsMaxAgeSeconds: true,
  cacheEntries: true,
  maxResponseBytes: true,
  maxRangeDays: true,
  maxRunsPerQuery: true,
  storedRunCacheMiB: true,
  preferStored: true,
  maxSeries: true,
  topSeries: true,
  gates: true,
  acks: true,
  ladderProfile: true,
  exploreDatasourceUid: true,
  tlsAuth: true,
  tlsAuthWithCACert: true,
  tlsSkipVerify: true,
  serverName: true,
} satisfies Record<Exclude<keyof DensityOptions, keyof DataSourceJsonData | `httpHeaderName${number}`>, true>;

/** Every secureJsonData key: as above. */
const SECURE_KEYS = {
  basicAuthPassword: true,
  bearerToken: true,
  kubeconfig: true,
  kubernetesToken: true,
  kubernetesCACert: true,
  tlsCACert: true,
  tlsClientCert: true,
  tlsClientKey: true,
} satisfies Record<Exclude<keyof DensitySecureJsonData, `httpHeaderValue${number}`>, true>;

describe('the frontend settings match the committed schema', () => {
  const jsonData = settings.spec.properties.jsonData.properties;

  it('names the same jsonData keys', () => {
    expect(sorted([...Object.keys(JSON_DATA_KEYS), 'httpHeaderName1'])).toEqual(sorted(Object.keys(jsonData)));
  });

  it('names the same secure keys', () => {
    expect(sorted([...Object.keys(SECURE_KEYS), 'httpHeaderValue1'])).toEqual(
      sorted(settings.secureValues.map((v) => v.key))
    );
  });

  it('has the schema defaults', () => {
    const { timeoutInstantSeconds, timeoutRangeSeconds, ...rest } = DEFAULTS;
    expect([timeoutInstantSeconds, timeoutRangeSeconds]).toEqual([5, 8]);
    expect(jsonData.timeoutSeconds.default).toBeUndefined();
    for (const [k, v] of Object.entries(rest)) {
      expect([k, jsonData[k]?.default]).toEqual([k, v]);
    }
    const withDefault = Object.keys(jsonData).filter((k) => jsonData[k].default !== undefined);
    expect(sorted(withDefault)).toEqual(sorted(Object.keys(rest)));
  });
});
