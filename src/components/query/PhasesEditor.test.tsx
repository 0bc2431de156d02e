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

describe('PhasesEditor', () => {
  it('phases shows ["Run","Op","Layer"]', async () => {
    await expectFields('phases', ['Run', 'Op', 'Layer'], ['Scope', 'Block', 'Test name', 'Align']);
  });

  it.each<[Partial<DensityQuery>, string, Partial<DensityQuery>]>([
    [{ queryType: 'phases' }, 'Restore', { op: 'restore' }],
    [{ queryType: 'phases' }, 'ateom', { layer: 'ateom' }],
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
});
