import React, { useEffect, useMemo, useState } from 'react';
import { TimeRange } from '@grafana/data';
import { getTemplateSrv } from '@grafana/runtime';
import { Combobox, ComboboxOption } from '@grafana/ui';

import type { DataSource } from '../datasource';
import { runLabel } from '../runs';
import { RUN_LATEST, RUN_RANGE, RunInfo } from '../types';

const RUN_RANGE_OPTION: ComboboxOption<string> = {
  value: RUN_RANGE,
  label: 'Dashboard time range',
  description: 'The dashboard range is the run window; for runs, frontier and summary: every run starting in it',
};
export const RUN_LATEST_OPTION: ComboboxOption<string> = {
  value: RUN_LATEST,
  label: 'Latest run',
  description: 'The newest run across catalogs (of the test name below, if set)',
};

const DEFAULT_SPECIAL = [RUN_RANGE_OPTION, RUN_LATEST_OPTION];

export interface RunPickerProps {
  datasource: Pick<DataSource, 'listRuns'>;
  value: string | string[] | undefined;
  onChange: (run: string) => void;
  range?: TimeRange;
  inputId?: string;
  width?: number;
  /** The options listed before the variables and runs (default: the dashboard range and the latest run). */
  special?: Array<ComboboxOption<string>>;
  placeholder?: string;
}

/**
 * Run picker: the dashboard range, the latest run, dashboard variables, and
 * the runs the backend lists at `GET /runs`. Any other id (or `$variable`)
 * can be typed in. A list (multi-value) shows comma-separated.
 */
export function RunPicker({
  datasource,
  value,
  onChange,
  range,
  inputId,
  width = 60,
  special = DEFAULT_SPECIAL,
  placeholder = RUN_RANGE_OPTION.label,
}: RunPickerProps) {
  // Re-list when the dashboard range moves, not on every re-render; the
  // previous list stays visible while the new one loads.
  const key = `${rangeKey(range, 'from')}|${rangeKey(range, 'to')}`;
  const [listing, setListing] = useState<{ key: string; runs: RunInfo[]; error?: string }>();
  useEffect(() => {
    let cancelled = false;
    datasource
      .listRuns(range)
      .then((runs) => !cancelled && setListing({ key, runs }))
      .catch((err: unknown) => !cancelled && setListing({ key, runs: [], error: errorMessage(err) }));
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [datasource, key]);
  const loading = listing?.key !== key;
  const runs = listing?.runs;
  const loadError = listing?.error;

  const options = useMemo(() => {
    const variables: Array<ComboboxOption<string>> = getTemplateSrv()
      .getVariables()
      .map((v) => ({ value: `$${v.name}`, label: `$${v.name}`, description: 'Dashboard variable' }));
    const listed: Array<ComboboxOption<string>> = (runs ?? []).map((r) => ({
      value: r.id,
      label: runLabel(r),
      description: r.id,
    }));
    const info: Array<ComboboxOption<string>> = loadError
      ? [{ value: '__density_runs_error', label: `Could not list runs: ${loadError}`, infoOption: true }]
      : [];
    return [...special, ...variables, ...listed, ...info];
  }, [runs, loadError, special]);

  const current = currentOption(value, options);

  return (
    <Combobox<string>
      id={inputId}
      width={width}
      options={options}
      value={current}
      loading={loading}
      createCustomValue
      customValueDescription="Use this run id"
      placeholder={placeholder}
      onChange={(opt) => onChange(opt.value)}
    />
  );
}

function currentOption(
  value: string | string[] | undefined,
  options: Array<ComboboxOption<string>>
): ComboboxOption<string> | null {
  if (Array.isArray(value)) {
    const joined = value.join(', ');
    return { value: joined, label: joined };
  }
  const v = value ?? RUN_RANGE;
  // '' with no option of its own is an unset picker (its placeholder shows).
  return options.find((o) => o.value === v) ?? (v === '' ? null : { value: v, label: v });
}

function rangeKey(range: TimeRange | undefined, end: 'from' | 'to'): string {
  if (!range) {
    return '';
  }
  const raw = range.raw[end];
  return typeof raw === 'string' ? raw : String(range[end].valueOf());
}

function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { data?: { message?: string }; message?: string; statusText?: string };
    return e.data?.message ?? e.message ?? e.statusText ?? 'unknown error';
  }
  return String(err);
}
