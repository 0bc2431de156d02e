import { setTemplateSrv } from '@grafana/runtime';
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, setup } from '../../testing/queryEditor';
import { DensityQuery } from '../../types';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('PackingEditor', () => {
  it('packing shows ["Run","Align"]', async () => {
    await expectFields('packing', ['Run', 'Align'], ['Scope', 'Resource', 'Block', 'Test name', 'Tag', 'Baseline']);
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

  it.each<[Partial<DensityQuery>, string, Partial<DensityQuery>]>([
    [{ queryType: 'packing' }, 'Elapsed', { align: 'elapsed' }],
  ])('%j: clicking %s sets %j and runs', async (query, label, want) => {
    const { onChange, onRunQuery } = await setup({ run: 'range', ...query });
    await userEvent.click(screen.getByLabelText(label));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', run: 'range', ...query, ...want });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});
