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

describe('WorkingSetEditor', () => {
  it('workingSet shows ["Run","Block","Align"]', async () => {
    await expectFields('workingSet', ['Run', 'Block', 'Align'], ['Scope', 'Resource', 'Test name']);
  });

  it.each<[Partial<DensityQuery>, string, Partial<DensityQuery>]>([
    [{ queryType: 'workingSet', block: 'node' }, 'Per actor', { block: 'per_actor' }],
    [{ queryType: 'workingSet', block: 'node' }, 'Atelet', { block: 'atelet' }],
    [{ queryType: 'workingSet', block: 'node' }, 'Worker', { block: 'worker' }],
  ])('%j: clicking %s sets %j and runs', async (query, label, want) => {
    const { onChange, onRunQuery } = await setup({ run: 'range', ...query });
    await userEvent.click(screen.getByLabelText(label));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', run: 'range', ...query, ...want });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('align absolute removes the key and runs', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'workingSet', run: '$run', align: 'elapsed' });
    await userEvent.click(screen.getByLabelText('Absolute'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'workingSet', run: '$run' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});
