import { setTemplateSrv } from '@grafana/runtime';
import { fireEvent, screen } from '@testing-library/react';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, setup } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('ChangePointsEditor', () => {
  it('changePoints shows ["Test name","Keys"]', async () => {
    await expectFields('changePoints', ['Test name', 'Keys'], ['Run', 'Baseline', 'Tag', 'Align']);
  });

  it('changePoints shows a list of keys comma-separated', async () => {
    await setup({ queryType: 'changePoints', testName: 'nightly', keys: ['restore_p99_s', 'cluster_packing_p50'] });
    expect(screen.getByLabelText('Test name')).toHaveValue('nightly');
    expect(screen.getByLabelText('Keys')).toHaveValue('restore_p99_s, cluster_packing_p50');
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

  it('min runs sets a whole number, runs on blur, and clears', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'changePoints', testName: 'nightly', minRuns: 2 });
    expect(screen.getByLabelText('Min runs')).toHaveValue(2);
    fireEvent.change(screen.getByLabelText('Min runs'), { target: { value: '1' } });
    expect(onChange).toHaveBeenLastCalledWith({
      refId: 'A',
      queryType: 'changePoints',
      testName: 'nightly',
      minRuns: 1,
    });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(screen.getByLabelText('Min runs'));
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    fireEvent.change(screen.getByLabelText('Min runs'), { target: { value: '' } });
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'changePoints', testName: 'nightly' });
  });
});
