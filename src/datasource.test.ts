import {
  AnnotationQuery,
  DataQueryRequest,
  DataQueryResponse,
  dateTime,
  FieldType,
  MetricFindValue,
  toDataFrame,
} from '@grafana/data';
import { lastValueFrom, Observable, of } from 'rxjs';

import { DataSource, DensityVariableSupport, framesToMetricFindValues } from './datasource';
import { FakeTemplateSrv, instanceSettings } from './testing/fixtures';
import { DensityQuery, DensityVariableQuery } from './types';

const VARS = {
  run: 'prom-1700000000',
  runs: ['sweep%2Fa/1700000000/abc', 'prom-1700000600', 'sweep%2Fa/1700000000/abc'],
  oneRun: ['prom-1700000600'],
  none: [],
  test: 'sweep-1k',
  tests: ['sweep-1k', 'ladder'],
  commit: 'c0ffee1',
};

function newDataSource() {
  return new DataSource(instanceSettings(), new FakeTemplateSrv(VARS));
}

describe('applyTemplateVariables', () => {
  const cases: Array<{ name: string; query: Partial<DensityQuery>; want: Partial<DensityQuery> }> = [
    { name: 'literal run id unchanged', query: { run: 'sweep/1700000000/abc' }, want: { run: 'sweep/1700000000/abc' } },
    { name: 'missing run means range', query: {}, want: { run: 'range' } },
    { name: 'latest stays latest', query: { run: 'latest' }, want: { run: 'latest' } },
    { name: 'single-value variable', query: { run: '$run' }, want: { run: 'prom-1700000000' } },
    { name: 'braced variable', query: { run: '${run}' }, want: { run: 'prom-1700000000' } },
    {
      name: 'multi-value variable becomes a list without duplicates',
      query: { run: '$runs' },
      want: { run: ['sweep%2Fa/1700000000/abc', 'prom-1700000600'] },
    },
    {
      name: 'multi-value with one selection is a plain id',
      query: { run: '$oneRun' },
      want: { run: 'prom-1700000600' },
    },
    {
      name: 'a list of runs is interpolated item by item',
      query: { run: ['$run', 'sweep/1/x', '$oneRun'] },
      want: { run: ['prom-1700000000', 'sweep/1/x', 'prom-1700000600'] },
    },
    { name: 'empty multi-value passes the raw text to the backend', query: { run: '$none' }, want: { run: '$none' } },
    { name: 'unknown variable is left for the backend to name', query: { run: '$nope' }, want: { run: '$nope' } },
    {
      name: 'testName and tag interpolated',
      query: { queryType: 'runs', testName: '$test', tag: '$commit' },
      want: { queryType: 'runs', run: 'range', testName: 'sweep-1k', tag: 'c0ffee1' },
    },
    {
      name: 'multi-value testName joined with commas',
      query: { queryType: 'summary', testName: '$tests' },
      want: { queryType: 'summary', run: 'range', testName: 'sweep-1k,ladder' },
    },
    {
      name: 'compare baseline and candidate interpolated, one run each',
      query: { queryType: 'compare', baseline: '$run', candidate: '$runs' },
      want: { queryType: 'compare', run: 'range', baseline: 'prom-1700000000', candidate: 'sweep%2Fa/1700000000/abc' },
    },
    {
      name: 'an unset baseline variable is left for the backend to name',
      query: { queryType: 'gates', run: 'latest', baseline: '$nope' },
      want: { queryType: 'gates', run: 'latest', baseline: '$nope' },
    },
    {
      name: 'changePoints keys interpolated, multi-value joined with commas',
      query: { queryType: 'changePoints', testName: '$test', keys: 'restore_p99_s,$tests' },
      want: { queryType: 'changePoints', run: 'range', testName: 'sweep-1k', keys: 'restore_p99_s,sweep-1k,ladder' },
    },
    {
      name: 'a list of keys stays a list',
      query: { queryType: 'changePoints', testName: 'n', keys: ['a', '$test'] },
      want: { queryType: 'changePoints', run: 'range', testName: 'n', keys: ['a', 'sweep-1k'] },
    },
    {
      name: 'align passes through',
      query: { queryType: 'packing', run: '$runs', align: 'elapsed' },
      want: { queryType: 'packing', run: ['sweep%2Fa/1700000000/abc', 'prom-1700000600'], align: 'elapsed' },
    },
    {
      name: 'per-type options pass through',
      query: { queryType: 'psi', run: '$run', scope: 'pod', resource: 'io' },
      want: { queryType: 'psi', run: 'prom-1700000000', scope: 'pod', resource: 'io' },
    },
  ];
  it.each(cases)('$name', ({ query, want }) => {
    const got = newDataSource().applyTemplateVariables({ refId: 'A', ...query }, {});
    expect(got).toEqual({ refId: 'A', ...want });
  });

  it('does not add testName or tag keys that the query lacks', () => {
    const got = newDataSource().applyTemplateVariables({ refId: 'A', queryType: 'packing', run: '$run' }, {});
    expect(Object.keys(got).sort()).toEqual(['queryType', 'refId', 'run']);
  });

  it('prefers scoped variables (repeated panels) over dashboard values', () => {
    const got = newDataSource().applyTemplateVariables(
      { refId: 'A', run: '$run' },
      { run: { text: 'scoped', value: 'prom-1699990000' } }
    );
    expect(got.run).toBe('prom-1699990000');
  });

  it('interpolateVariablesInQueries applies the same rules and sets the datasource', () => {
    const [got] = newDataSource().interpolateVariablesInQueries([{ refId: 'A', run: '$runs' }], {});
    expect(got.run).toEqual(['sweep%2Fa/1700000000/abc', 'prom-1700000600']);
    expect(got.datasource).toEqual({ type: 'substrate-density-datasource', uid: 'density-uid' });
  });
});

describe('filterQuery', () => {
  it.each([
    [{ refId: 'A', queryType: 'packing' as const }, true],
    [{ refId: 'A', queryType: 'packing' as const, hide: false }, true],
    [{ refId: 'A', queryType: 'packing' as const, hide: true }, false],
  ])('%j -> %s', (query, want) => {
    expect(newDataSource().filterQuery(query)).toBe(want);
  });
});

describe('defaults and annotations', () => {
  it('a new query is packing over the dashboard range', () => {
    expect(newDataSource().getDefaultQuery('dashboard' as never)).toEqual({ queryType: 'packing', run: 'range' });
  });

  it('annotation queries are always of type annotations', () => {
    const ds = newDataSource();
    expect(ds.annotations.getDefaultQuery!()).toEqual({ queryType: 'annotations', run: 'range' });
    const anno = {
      name: 'Runs',
      enable: true,
      iconColor: 'blue',
      target: { refId: 'Anno', queryType: 'packing', testName: 'sweep-1k' },
    } as AnnotationQuery<DensityQuery>;
    expect(ds.annotations.prepareQuery!(anno)).toEqual({
      refId: 'Anno',
      queryType: 'annotations',
      run: 'range',
      testName: 'sweep-1k',
    });
    expect(ds.annotations.prepareQuery!({ name: 'Runs', enable: true, iconColor: 'blue' })).toEqual({
      refId: 'Anno',
      queryType: 'annotations',
      run: 'range',
    });
  });
});

describe('resources', () => {
  it.each([
    ['a bare array', [{ id: 'prom-1', start: 1 }, { id: '' }, { nope: 1 }, 'x'], ['prom-1']],
    ['an object with runs', { runs: [{ id: 'a/1/b' }, { id: 'prom-2' }] }, ['a/1/b', 'prom-2']],
    ['something else', { error: 'x' }, []],
  ])('listRuns accepts %s', async (_name, body, ids) => {
    const ds = newDataSource();
    const getResource = jest.spyOn(ds, 'getResource').mockResolvedValue(body);
    const range = { from: dateTime(1700000000000), to: dateTime(1700003600000), raw: { from: 'now-1h', to: 'now' } };
    const runs = await ds.listRuns(range);
    expect(runs.map((r) => r.id)).toEqual(ids);
    expect(getResource).toHaveBeenCalledWith('runs', { from: '1700000000000', to: '1700003600000' });
  });

  it('listTests keeps strings only', async () => {
    const ds = newDataSource();
    jest.spyOn(ds, 'getResource').mockResolvedValue({ tests: ['ladder', 3, 'sweep-1k'] });
    await expect(ds.listTests()).resolves.toEqual(['ladder', 'sweep-1k']);
  });
});

// 2023-11-14 22:13:20 UTC (jest runs with TZ=UTC).
const START_MS = 1700000000000;

const runsFrame = () =>
  toDataFrame({
    fields: [
      { name: 'id', type: FieldType.string, values: ['sweep-1k/1700000000/c0ffee1', 'prom-1700000600'] },
      { name: 'test_name', type: FieldType.string, values: ['sweep-1k', ''] },
      { name: 'tag', type: FieldType.string, values: ['c0ffee1', null] },
      { name: 'start', type: FieldType.time, values: [START_MS, START_MS + 600_000] },
      { name: 'peak_users', type: FieldType.number, values: [1000, 40] },
    ],
  });

describe('variables through the backend', () => {
  function stubQuery(ds: DataSource, response: DataQueryResponse) {
    const requests: Array<DataQueryRequest<DensityQuery>> = [];
    jest.spyOn(ds, 'query').mockImplementation((req: DataQueryRequest<DensityQuery>) => {
      requests.push(req);
      return of(response) as Observable<DataQueryResponse>;
    });
    return requests;
  }

  it('runs: value is the id, text is test name, tag and start time', async () => {
    const ds = newDataSource();
    const requests = stubQuery(ds, { data: [runsFrame()] });
    const range = { from: dateTime(START_MS), to: dateTime(START_MS + 3_600_000), raw: { from: 'now-1h', to: 'now' } };
    const values = await ds.metricFindQuery({ refId: 'v', queryType: 'runs', testName: '$test' }, { range });
    expect(values).toEqual<MetricFindValue[]>([
      { text: 'sweep-1k c0ffee1 2023-11-14 22:13:20', value: 'sweep-1k/1700000000/c0ffee1' },
      { text: '2023-11-14 22:23:20', value: 'prom-1700000600' },
    ]);
    expect(requests).toHaveLength(1);
    expect(requests[0].targets).toEqual([{ refId: 'v', queryType: 'runs', run: 'range', testName: '$test' }]);
    expect(requests[0].range).toBe(range);
  });

  it('tests: one value per test name', async () => {
    const ds = newDataSource();
    stubQuery(ds, {
      data: [toDataFrame({ fields: [{ name: 'test_name', type: FieldType.string, values: ['ladder', 'sweep-1k'] }] })],
    });
    await expect(ds.metricFindQuery({ refId: 'v', queryType: 'tests' })).resolves.toEqual([
      { text: 'ladder', value: 'ladder' },
      { text: 'sweep-1k', value: 'sweep-1k' },
    ]);
  });

  it('a plain string query is accepted', async () => {
    const ds = newDataSource();
    const requests = stubQuery(ds, { data: [] });
    await ds.metricFindQuery('tests');
    expect(requests[0].targets[0]).toEqual({ refId: 'variable', queryType: 'tests', run: 'range' });
  });

  it('a backend error rejects with its message', async () => {
    const ds = newDataSource();
    stubQuery(ds, { data: [], errors: [{ message: 'unknown run "x"' }] });
    await expect(ds.metricFindQuery({ refId: 'v', queryType: 'runs' })).rejects.toThrow('unknown run "x"');
  });

  it('the variable support runs the first target and returns values', async () => {
    const ds = newDataSource();
    stubQuery(ds, { data: [runsFrame()] });
    const support = ds.variables as DensityVariableSupport;
    expect(support).toBeInstanceOf(DensityVariableSupport);
    const res = await lastValueFrom(
      support.query({
        targets: [{ refId: 'v', queryType: 'runs' }],
        range: undefined,
      } as unknown as DataQueryRequest<DensityVariableQuery>)
    );
    expect(res.data.map((v: MetricFindValue) => v.value)).toEqual(['sweep-1k/1700000000/c0ffee1', 'prom-1700000600']);
  });
});

describe('framesToMetricFindValues', () => {
  it('uses text/value fields when the backend provides them and drops duplicates', () => {
    const frame = toDataFrame({
      fields: [
        { name: 'text', type: FieldType.string, values: ['A run', 'Same id', 'B run'] },
        { name: 'value', type: FieldType.string, values: ['a', 'a', 'b'] },
      ],
    });
    expect(framesToMetricFindValues([frame], 'runs')).toEqual([
      { text: 'A run', value: 'a' },
      { text: 'B run', value: 'b' },
    ]);
  });

  it('reads a numeric start as Unix seconds', () => {
    const frame = toDataFrame({
      fields: [
        { name: 'id', type: FieldType.string, values: ['prom-1700000000'] },
        { name: 'start', type: FieldType.number, values: [1700000000] },
      ],
    });
    expect(framesToMetricFindValues([frame], 'runs')).toEqual([
      { text: '2023-11-14 22:13:20', value: 'prom-1700000000' },
    ]);
  });
});
