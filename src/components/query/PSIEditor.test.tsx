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

describe('PSIEditor', () => {
  it('psi shows ["Run","Scope","Resource","Series","Align"]', async () => {
    await expectFields('psi', ['Run', 'Scope', 'Resource', 'Series', 'Align'], ['Block', 'Test name']);
  });

  it.each<[Partial<DensityQuery>, string, Partial<DensityQuery>]>([
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Pod', { scope: 'pod' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'I/O', { resource: 'io' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Memory', { resource: 'memory' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'All', { series: 'all' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Bands', { series: 'bands' }],
    [{ queryType: 'psi', scope: 'node', resource: 'cpu' }, 'Elapsed', { align: 'elapsed' }],
  ])('%j: clicking %s sets %j and runs', async (query, label, want) => {
    const { onChange, onRunQuery } = await setup({ run: 'range', ...query });
    await userEvent.click(screen.getByLabelText(label));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', run: 'range', ...query, ...want });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });
});
