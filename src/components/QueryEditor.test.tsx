import React from 'react';
import { dateTime, TimeRange } from '@grafana/data';
import { setTemplateSrv } from '@grafana/runtime';
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import type { DataSource } from '../datasource';
import { FakeTemplateSrv, giveElementsASize } from '../testing/fixtures';
import { DensityQuery, QUERY_TYPES, RunInfo } from '../types';
import { QUERY_TYPE_INFO, QueryEditor } from './QueryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

const RUNS: RunInfo[] = [
  { id: 'sweep-1k/1700000000/c0ffee1', test_name: 'sweep-1k', tag: 'c0ffee1', start: 1700000000, end: 1700003600 },
  { id: 'prom-1700100000', start: 1700100000 },
];

const RANGE: TimeRange = {
  from: dateTime(1700000000000),
  to: dateTime(1700086400000),
  raw: { from: 'now-24h', to: 'now' },
};

function fakeDatasource(listRuns: () => Promise<RunInfo[]> = () => Promise.resolve(RUNS)) {
  return { listRuns: jest.fn(listRuns) } as unknown as DataSource & { listRuns: jest.Mock };
}

async function setup(query: Partial<DensityQuery>, datasource = fakeDatasource()) {
  const onChange = jest.fn<void, [DensityQuery]>();
  const onRunQuery = jest.fn();
  const utils = render(
    <QueryEditor
      query={{ refId: 'A', ...query }}
      onChange={onChange}
      onRunQuery={onRunQuery}
      datasource={datasource}
      range={RANGE}
    />
  );
  // Let the run list load.
  await act(async () => {
    await Promise.resolve();
  });
  return { ...utils, onChange, onRunQuery, datasource };
}

async function openCombobox(label: string) {
  await userEvent.click(screen.getByLabelText(label));
  return within(await screen.findByRole('listbox'));
}

describe('QueryEditor renders', () => {
  it('shows the query type, its description and the run', async () => {
    await setup({ queryType: 'packing', run: 'range' });
    expect(screen.getByLabelText('Query type')).toHaveValue('Packing');
    expect(screen.getByTestId('density-query-type-description')).toHaveTextContent(QUERY_TYPE_INFO.packing.description);
    expect(screen.getByLabelText('Run')).toHaveValue('Dashboard time range');
  });

  it('lists every query type with a one-line description', async () => {
    await setup({ queryType: 'packing' });
    const menu = await openCombobox('Query type');
    for (const t of QUERY_TYPES) {
      expect(menu.getByText(QUERY_TYPE_INFO[t].label)).toBeInTheDocument();
      expect(menu.getByText(QUERY_TYPE_INFO[t].description)).toBeInTheDocument();
    }
  });

  const perType: Array<[DensityQuery['queryType'], string[], string[]]> = [
    ['packing', ['Run', 'Align'], ['Scope', 'Resource', 'Block', 'Test name', 'Tag', 'Baseline']],
    ['psi', ['Run', 'Scope', 'Resource', 'Series', 'Align'], ['Block', 'Test name']],
    ['snapshots', ['Run'], ['Scope', 'Block', 'Test name', 'Align']],
    ['activeActors', ['Run', 'Align'], ['Scope', 'Block', 'Test name']],
    ['workingSet', ['Run', 'Block', 'Align'], ['Scope', 'Resource', 'Test name']],
    ['oomEvents', ['Run'], ['Scope', 'Block', 'Test name', 'Align']],
    ['clusterFacts', ['Run'], ['Scope', 'Block', 'Test name']],
    ['frontier', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']],
    ['summary', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']],
    ['runs', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']],
    ['tests', [], ['Run', 'Scope', 'Block', 'Test name']],
    ['annotations', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']],
    ['ladder', ['Run'], ['Scope', 'Resource', 'Block', 'Test name']],
    ['phases', ['Run', 'Op', 'Layer'], ['Scope', 'Block', 'Test name', 'Align']],
    ['gates', ['Run', 'Baseline'], ['Candidate', 'Keys', 'Align', 'Scope', 'Tag']],
    ['compare', ['Baseline', 'Candidate'], ['Run', 'Keys', 'Align', 'Test name']],
    ['changePoints', ['Test name', 'Keys'], ['Run', 'Baseline', 'Tag', 'Align']],
  ];
  it.each(perType)('%s shows %j', async (queryType, shown, hidden) => {
    await setup({ queryType, run: 'range' });
    for (const label of shown) {
      expect(screen.getByLabelText(label)).toBeInTheDocument();
    }
    for (const label of hidden) {
      expect(screen.queryByLabelText(label)).not.toBeInTheDocument();
    }
  });

  it('gates shows the latest run and no baseline by default', async () => {
    await setup({ queryType: 'gates' });
    expect(screen.getByLabelText('Run')).toHaveValue('Latest run');
    expect(screen.getByLabelText('Baseline')).toHaveValue('No baseline');
  });

  it('compare shows its runs by label, changePoints its test name and keys', async () => {
    await setup({ queryType: 'compare', baseline: 'sweep-1k/1700000000/c0ffee1', candidate: '$run' });
    expect(screen.getByLabelText('Baseline')).toHaveValue('sweep-1k c0ffee1 2023-11-14 22:13:20');
    expect(screen.getByLabelText('Candidate')).toHaveValue('$run');
  });

  it('changePoints shows a list of keys comma-separated', async () => {
    await setup({ queryType: 'changePoints', testName: 'nightly', keys: ['restore_p99_s', 'cluster_packing_p50'] });
    expect(screen.getByLabelText('Test name')).toHaveValue('nightly');
    expect(screen.getByLabelText('Keys')).toHaveValue('restore_p99_s, cluster_packing_p50');
  });

  it('align shows absolute unless the query says elapsed', async () => {
    await setup({ queryType: 'packing', run: '$run', align: 'elapsed' });
    expect(screen.getByLabelText('Elapsed')).toBeChecked();
    expect(screen.getByLabelText('Absolute')).not.toBeChecked();
  });

  it('offers the test filter for any type when the run is latest', async () => {
    await setup({ queryType: 'packing', run: 'latest', testName: 'sweep-1k' });
    expect(screen.getByLabelText('Test name')).toHaveValue('sweep-1k');
  });
});

describe('QueryEditor emits queries', () => {
  it.each<[string, Partial<DensityQuery>, string, DensityQuery]>([
    [
      'psi gets its defaults',
      { queryType: 'packing', run: 'range' },
      'Pressure stall (PSI)',
      { refId: 'A', queryType: 'psi', run: 'range', scope: 'node', resource: 'cpu' },
    ],
    [
      'workingSet drops psi options and gets a block',
      { queryType: 'psi', run: 'prom-1', scope: 'pod', resource: 'io' },
      'Working set',
      { refId: 'A', queryType: 'workingSet', run: 'prom-1', block: 'node' },
    ],
    [
      'summary keeps nothing it does not use',
      { queryType: 'workingSet', run: 'range', block: 'actor' },
      'Summary',
      { refId: 'A', queryType: 'summary', run: 'range' },
    ],
    [
      'runs keeps the test filter',
      { queryType: 'frontier', run: 'range', testName: 'sweep-1k', tag: 'abc' },
      'Runs',
      { refId: 'A', queryType: 'runs', run: 'range', testName: 'sweep-1k', tag: 'abc' },
    ],
    [
      'a latest run keeps its test filter',
      { queryType: 'runs', run: 'latest', testName: 'sweep-1k' },
      'Snapshots',
      { refId: 'A', queryType: 'snapshots', run: 'latest', testName: 'sweep-1k' },
    ],
    [
      'gates reads one stored run: the range becomes latest',
      { queryType: 'packing', run: 'range', align: 'elapsed' },
      'Gates',
      { refId: 'A', queryType: 'gates', run: 'latest' },
    ],
    [
      'gates keeps a run id',
      { queryType: 'snapshots', run: 'sweep-1k/1700000000/c0ffee1' },
      'Gates',
      { refId: 'A', queryType: 'gates', run: 'sweep-1k/1700000000/c0ffee1' },
    ],
    [
      'compare drops the run and keeps the baseline',
      { queryType: 'gates', run: 'latest', testName: 'nightly', baseline: 'latest' },
      'Compare',
      { refId: 'A', queryType: 'compare', baseline: 'latest' },
    ],
    [
      'changePoints keeps the test name, drops run and tag',
      { queryType: 'runs', run: 'range', testName: 'nightly', tag: 'abc' },
      'Change points',
      { refId: 'A', queryType: 'changePoints', testName: 'nightly' },
    ],
    [
      'align survives a change between time-series types',
      { queryType: 'packing', run: '$run', align: 'elapsed' },
      'Active actors',
      { refId: 'A', queryType: 'activeActors', run: '$run', align: 'elapsed' },
    ],
    [
      'align is dropped by a table type',
      { queryType: 'workingSet', run: '$run', block: 'atelet', align: 'elapsed' },
      'Snapshots',
      { refId: 'A', queryType: 'snapshots', run: '$run' },
    ],
  ])('type change: %s', async (_name, query, choose, want) => {
    const { onChange, onRunQuery } = await setup(query);
    const menu = await openCombobox('Query type');
    await userEvent.click(menu.getByText(choose));
    expect(onChange).toHaveBeenLastCalledWith(want);
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it.each<[Partial<DensityQuery>, string, Partial<DensityQuery>]>([
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Pod', { scope: 'pod' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'I/O', { resource: 'io' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Memory', { resource: 'memory' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'All', { series: 'all' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Bands', { series: 'bands' }],
    [{ queryType: 'workingSet', block: 'node' }, 'Per actor', { block: 'per_actor' }],
    [{ queryType: 'workingSet', block: 'node' }, 'Atelet', { block: 'atelet' }],
    [{ queryType: 'workingSet', block: 'node' }, 'Worker', { block: 'worker' }],
    [{ queryType: 'phases' }, 'Restore', { op: 'restore' }],
    [{ queryType: 'phases' }, 'ateom', { layer: 'ateom' }],
    [{ queryType: 'packing' }, 'Elapsed', { align: 'elapsed' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Elapsed', { align: 'elapsed' }],
  ])('%j: clicking %s sets %j and runs', async (query, label, want) => {
    const { onChange, onRunQuery } = await setup({ run: 'range', ...query });
    await userEvent.click(screen.getByLabelText(label));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', run: 'range', ...query, ...want });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('phases: Both drops the op filter and runs', async () => {
    const { onChange, onRunQuery } = await setup({
      run: 'range',
      queryType: 'phases',
      op: 'checkpoint',
      layer: 'atelet',
    });
    await userEvent.click(screen.getByLabelText('Both'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', run: 'range', queryType: 'phases', layer: 'atelet' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('align absolute removes the key and runs', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'workingSet', run: '$run', align: 'elapsed' });
    await userEvent.click(screen.getByLabelText('Absolute'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'workingSet', run: '$run' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it.each<[string, string, string, Partial<DensityQuery>]>([
    ['Baseline', 'Latest other run', 'gates', { baseline: 'latest' }],
    ['Baseline', 'sweep-1k c0ffee1 2023-11-14 22:13:20', 'gates', { baseline: 'sweep-1k/1700000000/c0ffee1' }],
    ['Baseline', '$run', 'compare', { baseline: '$run' }],
    ['Candidate', 'sweep-1k c0ffee1 2023-11-14 22:13:20', 'compare', { candidate: 'sweep-1k/1700000000/c0ffee1' }],
  ])('%s: choosing %s (%s) sets %j and runs', async (label, option, queryType, want) => {
    const { onChange, onRunQuery } = await setup({ queryType: queryType as DensityQuery['queryType'] });
    const menu = await openCombobox(label);
    expect(menu.queryByText('Dashboard time range')).not.toBeInTheDocument();
    await userEvent.click(menu.getByText(option));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType, ...want });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('gates: No baseline removes the baseline', async () => {
    const { onChange } = await setup({ queryType: 'gates', run: 'latest', baseline: 'latest' });
    const menu = await openCombobox('Baseline');
    await userEvent.click(menu.getByText('No baseline'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'gates', run: 'latest' });
  });

  it('gates offers latest but not the dashboard range as its run', async () => {
    await setup({ queryType: 'gates', run: 'latest' });
    const menu = await openCombobox('Run');
    expect(menu.getByText('Latest run')).toBeInTheDocument();
    expect(menu.queryByText('Dashboard time range')).not.toBeInTheDocument();
  });

  it('changePoints keys update the query, run on blur, and clear', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'changePoints', testName: 'nightly' });
    fireEvent.change(screen.getByLabelText('Keys'), { target: { value: 'restore_p99_s, $key' } });
    expect(onChange).toHaveBeenLastCalledWith({
      refId: 'A',
      queryType: 'changePoints',
      testName: 'nightly',
      keys: 'restore_p99_s, $key',
    });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(screen.getByLabelText('Keys'));
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    fireEvent.change(screen.getByLabelText('Keys'), { target: { value: ' ' } });
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'changePoints', testName: 'nightly' });
  });

  it('test name and tag update the query and run on blur', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'runs', run: 'range', tag: 'old' });
    fireEvent.change(screen.getByLabelText('Test name'), { target: { value: '$test' } });
    expect(onChange).toHaveBeenLastCalledWith({
      refId: 'A',
      queryType: 'runs',
      run: 'range',
      tag: 'old',
      testName: '$test',
    });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(screen.getByLabelText('Test name'));
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    fireEvent.change(screen.getByLabelText('Tag'), { target: { value: '' } });
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'runs', run: 'range' });
  });
});

describe('QueryEditor run picker', () => {
  it('lists the range, latest, dashboard variables and the runs from GET /runs', async () => {
    const { datasource } = await setup({ queryType: 'packing', run: 'range' });
    expect(datasource.listRuns).toHaveBeenCalledWith(RANGE);
    const menu = await openCombobox('Run');
    expect(menu.getByText('Dashboard time range')).toBeInTheDocument();
    expect(menu.getByText('Latest run')).toBeInTheDocument();
    expect(menu.getByText('$run')).toBeInTheDocument();
    expect(menu.getByText('$test')).toBeInTheDocument();
    expect(menu.getByText('sweep-1k c0ffee1 2023-11-14 22:13:20')).toBeInTheDocument();
    expect(menu.getByText('sweep-1k/1700000000/c0ffee1')).toBeInTheDocument();
    expect(menu.getByText('2023-11-16 02:00:00')).toBeInTheDocument();
  });

  it.each([
    ['sweep-1k c0ffee1 2023-11-14 22:13:20', 'sweep-1k/1700000000/c0ffee1'],
    ['Latest run', 'latest'],
    ['$run', '$run'],
  ])('choosing %s sets run=%s and runs the query', async (label, run) => {
    const { onChange, onRunQuery } = await setup({ queryType: 'snapshots', run: 'range' });
    const menu = await openCombobox('Run');
    await userEvent.click(menu.getByText(label));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'snapshots', run });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('shows the label of a listed run and a list of runs comma-separated', async () => {
    await setup({ queryType: 'summary', run: 'sweep-1k/1700000000/c0ffee1' });
    expect(screen.getByLabelText('Run')).toHaveValue('sweep-1k c0ffee1 2023-11-14 22:13:20');
  });

  it('shows a multi-run query comma-separated', async () => {
    await setup({ queryType: 'summary', run: ['a/1/x', 'prom-2'] });
    expect(screen.getByLabelText('Run')).toHaveValue('a/1/x, prom-2');
  });

  it('says why the run list is missing and still offers range and latest', async () => {
    const ds = fakeDatasource(() => Promise.reject({ data: { message: 'results store unreachable' } }));
    await setup({ queryType: 'packing', run: 'range' }, ds);
    const menu = await openCombobox('Run');
    expect(menu.getByText('Could not list runs: results store unreachable')).toBeInTheDocument();
    expect(menu.getByText('Latest run')).toBeInTheDocument();
  });
});
