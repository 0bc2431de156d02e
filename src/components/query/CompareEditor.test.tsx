import { setTemplateSrv } from '@grafana/runtime';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, openCombobox, setup } from '../../testing/queryEditor';
import { DensityQuery } from '../../types';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('CompareEditor', () => {
  it('compare shows ["Baseline","Candidate"]', async () => {
    await expectFields('compare', ['Baseline', 'Candidate'], ['Run', 'Keys', 'Align', 'Test name']);
  });

  it('compare shows its runs by label', async () => {
    await setup({ queryType: 'compare', baseline: 'sweep-1k/1700000000/c0ffee1', candidate: '$run' });
    expect(screen.getByLabelText('Baseline')).toHaveValue('sweep-1k c0ffee1 2023-11-14 22:13:20');
    expect(screen.getByLabelText('Candidate')).toHaveValue('$run');
  });

  it.each<[string, string, Partial<DensityQuery>]>([
    ['Baseline', '$run', { baseline: '$run' }],
    ['Candidate', 'sweep-1k c0ffee1 2023-11-14 22:13:20', { candidate: 'sweep-1k/1700000000/c0ffee1' }],
  ])('%s: choosing %s sets %j and runs', async (label, option, want) => {
    const { onChange, onRunQuery } = await setup({ queryType: 'compare' });
    const menu = await openCombobox(label);
    expect(menu.queryByText('Dashboard time range')).not.toBeInTheDocument();
    await userEvent.click(menu.getByText(option));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'compare', ...want });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});
