import { setTemplateSrv } from '@grafana/runtime';
import { fireEvent, screen } from '@testing-library/react';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, setup } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('RunsEditor', () => {
  it('runs shows ["Run","Test name","Tag"]', async () => {
    await expectFields('runs', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']);
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
