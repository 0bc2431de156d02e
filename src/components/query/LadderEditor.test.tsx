import { setTemplateSrv } from '@grafana/runtime';
import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, setup } from '../../testing/queryEditor';
import { DensityQuery } from '../../types';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('LadderEditor', () => {
  it('ladder shows ["Run"]', async () => {
    await expectFields('ladder', ['Run'], ['Scope', 'Resource', 'Block', 'Test name']);
  });

  it('ladder: numeric format shows the keys and run labels, and table drops them', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'ladder', run: 'latest' });
    expect(screen.queryByLabelText('Keys')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Run labels')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Table')).toBeChecked();
    await userEvent.click(screen.getByLabelText('Numeric'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'ladder', run: 'latest', format: 'numeric' });
    expect(onRunQuery).toHaveBeenCalledTimes(1);
  });

  it('ladder: numeric keys and run labels update the query', async () => {
    const query: DensityQuery = { refId: 'A', queryType: 'ladder', run: 'latest', format: 'numeric' };
    const { onChange, onRunQuery } = await setup(query);
    fireEvent.change(screen.getByLabelText('Keys'), { target: { value: 'resume_rps' } });
    expect(onChange).toHaveBeenLastCalledWith({ ...query, keys: 'resume_rps' });
    expect(onRunQuery).not.toHaveBeenCalled();
    fireEvent.blur(screen.getByLabelText('Keys'));
    expect(onRunQuery).toHaveBeenCalledTimes(1);
    await userEvent.click(screen.getByLabelText('Run labels'));
    expect(onChange).toHaveBeenLastCalledWith({ ...query, labels: 'run' });
  });

  it('ladder: table drops the numeric options', async () => {
    const { onChange } = await setup({
      queryType: 'ladder',
      run: 'latest',
      format: 'numeric',
      keys: 'resume_rps',
      labels: 'run',
    });
    expect(screen.getByLabelText('Keys')).toHaveValue('resume_rps');
    expect(screen.getByLabelText('Run labels')).toBeChecked();
    await userEvent.click(screen.getByLabelText('Table'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'ladder', run: 'latest' });
  });
});
