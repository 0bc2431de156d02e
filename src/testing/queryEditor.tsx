// Helpers of the query editor tests (src/components/QueryEditor.test.tsx and
// src/components/query/*.test.tsx); not bundled.
import React from 'react';
import { dateTime, TimeRange } from '@grafana/data';
import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import type { DataSource } from '../datasource';
import { QueryEditor } from '../components/QueryEditor';
import { DensityQuery, RunInfo } from '../types';

const RUNS: RunInfo[] = [
  { id: 'sweep-1k/1700000000/c0ffee1', test_name: 'sweep-1k', tag: 'c0ffee1', start: 1700000000, end: 1700003600 },
  { id: 'prom-1700100000', start: 1700100000 },
];

export const RANGE: TimeRange = {
  from: dateTime(1700000000000),
  to: dateTime(1700086400000),
  raw: { from: 'now-24h', to: 'now' },
};

export function fakeDatasource(listRuns: () => Promise<RunInfo[]> = () => Promise.resolve(RUNS)) {
  return { listRuns: jest.fn(listRuns) } as unknown as DataSource & { listRuns: jest.Mock };
}

/** Renders the query editor (the type picker and the type's editor) for query. */
export async function setup(query: Partial<DensityQuery>, datasource = fakeDatasource()) {
  const onChange = jest.fn<void, [DensityQuery]>();
  const onRunQuery = jest.fn();
  const utils = render(
    <QueryEditor
      query={{ refId: 'A', ...query }}
      onChange={onChange}
      onRunQuery={onRunQuery}
      datasource={datasource}
      range={RANGE}
    />
  );
  // Let the run list load.
  await act(async () => {
    await Promise.resolve();
  });
  return { ...utils, onChange, onRunQuery, datasource };
}

export async function openCombobox(label: string) {
  await userEvent.click(screen.getByLabelText(label));
  return within(await screen.findByRole('listbox'));
}

/** Checks that a query type's editor shows the shown labels and none of the hidden ones. */
export async function expectFields(queryType: DensityQuery['queryType'], shown: string[], hidden: string[]) {
  await setup({ queryType, run: 'range' });
  for (const label of shown) {
    expect(screen.getByLabelText(label)).toBeInTheDocument();
  }
  for (const label of hidden) {
    expect(screen.queryByLabelText(label)).not.toBeInTheDocument();
  }
}
