import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import type { DataSource } from '../datasource';
import { DensityVariableQuery } from '../types';
import { VariableQueryEditor } from './VariableQueryEditor';

function setup(query: DensityVariableQuery | string) {
  const onChange = jest.fn<void, [DensityVariableQuery]>();
  render(
    <VariableQueryEditor
      query={query as DensityVariableQuery}
      onChange={onChange}
      onRunQuery={jest.fn()}
      datasource={{} as DataSource}
    />
  );
  return { onChange };
}

describe('VariableQueryEditor', () => {
  it('renders runs with test-name and tag filters', () => {
    setup({ refId: 'v', queryType: 'runs', testName: 'sweep-1k', tag: 'c0ffee1' });
    expect(screen.getByLabelText('Runs')).toBeChecked();
    expect(screen.getByLabelText('Test names')).not.toBeChecked();
    expect(screen.getByLabelText('Test name')).toHaveValue('sweep-1k');
    expect(screen.getByLabelText('Tag')).toHaveValue('c0ffee1');
  });

  it('test names have no filters', () => {
    setup({ refId: 'v', queryType: 'tests' });
    expect(screen.getByLabelText('Test names')).toBeChecked();
    expect(screen.queryByLabelText('Test name')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Tag')).not.toBeInTheDocument();
  });

  it('switching to test names emits a tests query without filters', async () => {
    const { onChange } = setup({ refId: 'v', queryType: 'runs', testName: 'sweep-1k' });
    await userEvent.click(screen.getByLabelText('Test names'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'v', queryType: 'tests' });
  });

  it('switching back to runs emits a runs query', async () => {
    const { onChange } = setup({ refId: 'v', queryType: 'tests' });
    await userEvent.click(screen.getByLabelText('Runs'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'v', queryType: 'runs' });
  });

  it('commits the test-name filter on blur, not per keystroke', () => {
    const { onChange } = setup({ refId: 'v', queryType: 'runs' });
    const input = screen.getByLabelText('Test name');
    fireEvent.change(input, { target: { value: '$test' } });
    expect(onChange).not.toHaveBeenCalled();
    fireEvent.blur(input);
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'v', queryType: 'runs', testName: '$test' });
    fireEvent.change(screen.getByLabelText('Tag'), { target: { value: 'c0ffee1' } });
    fireEvent.blur(screen.getByLabelText('Tag'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'v', queryType: 'runs', testName: '$test', tag: 'c0ffee1' });
  });

  it('clearing a filter removes it', () => {
    const { onChange } = setup({ refId: 'v', queryType: 'runs', testName: 'sweep-1k' });
    const input = screen.getByLabelText('Test name');
    fireEvent.change(input, { target: { value: '' } });
    fireEvent.blur(input);
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'v', queryType: 'runs' });
  });

  it.each([
    ['', 'Runs'],
    ['tests', 'Test names'],
  ])('a legacy string query %j opens as %s', (query, checked) => {
    setup(query);
    expect(screen.getByLabelText(checked)).toBeChecked();
  });
});
