import { dateTimeFormat } from '@grafana/data';

import { RunInfo } from './types';

/** `<test_name> <tag> <start time>` (the variable text of a run, datasource.md), or the id when none of them is known. */
export function runText(testName: string, tag: string, startMs: number | undefined, id: string): string {
  const start = startMs === undefined ? '' : dateTimeFormat(startMs, { format: 'YYYY-MM-DD HH:mm:ss' });
  const text = [testName, tag, start].filter((s) => s !== '').join(' ');
  return text === '' ? id : text;
}

/** The picker label of a run listed by `GET /runs` (start in Unix seconds). */
export function runLabel(run: RunInfo): string {
  return runText(run.test_name ?? '', run.tag ?? '', run.start === undefined ? undefined : run.start * 1000, run.id);
}
