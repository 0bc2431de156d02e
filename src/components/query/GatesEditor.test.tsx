import { setTemplateSrv } from '@grafana/runtime';
import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, openCombobox, setup } from '../../testing/queryEditor';
import { DensityQuery } from '../../types';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('GatesEditor', () => {
  it('gates shows ["Run","Baseline"]', async () => {
    await expectFields('gates', ['Run', 'Baseline'], ['Candidate', 'Keys', 'Align', 'Scope', 'Tag']);
  });

  it('gates shows the latest run and no baseline by default', async () => {
    await setup({ queryType: 'gates' });
    expect(screen.getByLabelText('Run')).toHaveValue('Latest run');
    expect(screen.getByLabelText('Baseline')).toHaveValue('No baseline');
  });

  it.each<[string, string, Partial<DensityQuery>]>([
    ['Baseline', 'Latest other run', { baseline: 'latest' }],
    ['Baseline', 'sweep-1k c0ffee1 2023-11-14 22:13:20', { baseline: 'sweep-1k/1700000000/c0ffee1' }],
  ])('%s: choosing %s sets %j and runs', async (label, option, want) => {
    const { onChange, onRunQuery } = await setup({ queryType: 'gates' });
    const menu = await openCombobox(label);
    expect(menu.queryByText('Dashboard time range')).not.toBeInTheDocument();
    await userEvent.click(menu.getByText(option));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'gates', ...want });
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

  it('gates: numeric format shows the keys and run labels, and table drops them', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'gates', run: 'latest' });
    expect(screen.queryByLabelText('Keys')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Run labels')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Table')).toBeChecked();
    await userEvent.click(screen.getByLabelText('Numeric'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'gates', run: 'latest', format: 'numeric' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('gates: numeric keys and run labels update the query', async () => {
    const query: DensityQuery = { refId: 'A', queryType: 'gates', run: 'latest', format: 'numeric' };
    const { onChange, onRunQuery } = await setup(query);
    fireEvent.change(screen.getByLabelText('Keys'), { target: { value: 'gate_cluster_packing_p50' } });
    expect(onChange).toHaveBeenLastCalledWith({ ...query, keys: 'gate_cluster_packing_p50' });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(screen.getByLabelText('Keys'));
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    await userEvent.click(screen.getByLabelText('Run labels'));
    expect(onChange).toHaveBeenLastCalledWith({ ...query, labels: 'run' });
  });

  it('gates: table drops the numeric options', async () => {
    const { onChange } = await setup({
      queryType: 'gates',
      run: 'latest',
      format: 'numeric',
      keys: 'gate_cluster_packing_p50',
      labels: 'run',
    });
    expect(screen.getByLabelText('Keys')).toHaveValue('gate_cluster_packing_p50');
    expect(screen.getByLabelText('Run labels')).toBeChecked();
    await userEvent.click(screen.getByLabelText('Table'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'gates', run: 'latest' });
  });
});
