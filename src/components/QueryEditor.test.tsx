import { setTemplateSrv } from '@grafana/runtime';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeTemplateSrv, giveElementsASize } from '../testing/fixtures';
import { fakeDatasource, openCombobox, RANGE, setup } from '../testing/queryEditor';
import { DensityQuery, QUERY_TYPES } from '../types';
import { QUERY_TYPE_INFO } from './QueryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

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
