import React from 'react';
import { setTemplateSrv } from '@grafana/runtime';
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import type { DataSource } from '../datasource';
import { FakeTemplateSrv, giveElementsASize } from '../testing/fixtures';
import { DensityQuery } from '../types';
import { AnnotationQueryEditor } from './AnnotationQueryEditor';

beforeAll(giveElementsASize);
beforeEach(() => setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000' })));

async function setup(query: DensityQuery) {
  const onChange = jest.fn<void, [DensityQuery]>();
  const datasource = {
    listRuns: jest.fn().mockResolvedValue([{ id: 'prom-1700000000', start: 1700000000 }]),
  } as unknown as DataSource;
  render(<AnnotationQueryEditor query={query} onChange={onChange} onRunQuery={jest.fn()} datasource={datasource} />);
  await act(async () => {
    await Promise.resolve();
  });
  return { onChange };
}

describe('AnnotationQueryEditor', () => {
  it('renders the run and the test-name and tag filters', async () => {
    await setup({ refId: 'Anno', queryType: 'annotations', run: 'range', testName: 'sweep-1k' });
    expect(screen.getByText(/Marks each run/)).toBeInTheDocument();
    expect(screen.getByLabelText('Run')).toHaveValue('Dashboard time range');
    expect(screen.getByLabelText('Test name')).toHaveValue('sweep-1k');
    expect(screen.getByLabelText('Tag')).toHaveValue('');
    expect(screen.queryByLabelText('Query type')).not.toBeInTheDocument();
  });

  it('filters are written with queryType annotations', async () => {
    const { onChange } = await setup({ refId: 'Anno' });
    fireEvent.change(screen.getByLabelText('Test name'), { target: { value: 'ladder' } });
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'Anno', queryType: 'annotations', testName: 'ladder' });
    fireEvent.change(screen.getByLabelText('Tag'), { target: { value: 'abc' } });
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'Anno', queryType: 'annotations', tag: 'abc' });
  });

  it('ladder steps switch adds and removes ladderSteps', async () => {
    const { onChange } = await setup({ refId: 'Anno', queryType: 'annotations' });
    expect(screen.getByLabelText('Ladder steps')).not.toBeChecked();
    fireEvent.click(screen.getByLabelText('Ladder steps'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'Anno', queryType: 'annotations', ladderSteps: true });
  });

  it('change points switch adds and removes changePoints', async () => {
    const { onChange } = await setup({ refId: 'Anno', queryType: 'annotations', testName: 'nightly' });
    expect(screen.getByLabelText('Change points')).not.toBeChecked();
    fireEvent.click(screen.getByLabelText('Change points'));
    expect(onChange).toHaveBeenLastCalledWith({
      refId: 'Anno',
      queryType: 'annotations',
      testName: 'nightly',
      changePoints: true,
    });
  });

  it('change points switch off removes the key; on without a test name says one is needed', async () => {
    const { onChange } = await setup({
      refId: 'Anno',
      queryType: 'annotations',
      changePoints: true,
      ladderSteps: true,
    });
    expect(screen.getByLabelText('Change points')).toBeChecked();
    expect(screen.getByText('Change points need a test name')).toBeInTheDocument();
    fireEvent.click(screen.getByLabelText('Change points'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'Anno', queryType: 'annotations', ladderSteps: true });
  });

  it('choosing a run writes it', async () => {
    const { onChange } = await setup({ refId: 'Anno', queryType: 'annotations', run: 'range' });
    await userEvent.click(screen.getByLabelText('Run'));
    const menu = within(await screen.findByRole('listbox'));
    await userEvent.click(menu.getByText('$run'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'Anno', queryType: 'annotations', run: '$run' });
  });
});
