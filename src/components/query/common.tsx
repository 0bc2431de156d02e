import React, { ChangeEvent } from 'react';
import { SelectableValue, TimeRange } from '@grafana/data';
import { ComboboxOption, InlineField, InlineFieldRow, InlineSwitch, Input, RadioButtonGroup } from '@grafana/ui';

import type { DataSource } from '../../datasource';
import { AlignMode, DensityQuery, FILTERED_TYPES, Format, RUN_LATEST, RUN_RANGE } from '../../types';
import { RunPicker, RunPickerProps } from '../RunPicker';

/**
 * What the query editor hands each query type's editor: the query, a change
 * function (which also runs the query unless told not to) and what the run
 * pickers need.
 */
export interface TypeEditorProps {
  query: DensityQuery;
  change: (next: DensityQuery, run?: boolean) => void;
  onRunQuery: () => void;
  datasource: Pick<DataSource, 'listRuns'>;
  range?: TimeRange;
}

export const LABEL_WIDTH = 14;

/** Sets key to value, or removes it for undefined / ''. */
export function withKey<K extends keyof DensityQuery>(
  query: DensityQuery,
  key: K,
  value: DensityQuery[K] | '' | undefined
): DensityQuery {
  const next: DensityQuery = { ...query };
  if (value === undefined || value === '') {
    delete next[key];
  } else {
    next[key] = value as DensityQuery[K];
  }
  return next;
}

interface RunPickerFieldProps extends RunPickerProps {
  label: string;
  inputId: string;
  tooltip: string;
}

/** A labelled run picker: the run a type reads, gates' baseline, compare's two runs. */
export function RunPickerField({ label, inputId, tooltip, ...picker }: RunPickerFieldProps) {
  return (
    <InlineField label={label} labelWidth={LABEL_WIDTH} htmlFor={inputId} tooltip={tooltip}>
      <RunPicker inputId={inputId} {...picker} />
    </InlineField>
  );
}

interface RunFieldProps extends TypeEditorProps {
  /** The options listed before the variables and runs (RunPicker's default: range and latest). */
  special?: Array<ComboboxOption<string>>;
  /** The run shown when the query has none. */
  fallback?: string;
  tooltip?: string;
}

/** The run a per-run type reads. */
export function RunField({ query, change, datasource, range, special, fallback = RUN_RANGE, tooltip }: RunFieldProps) {
  return (
    <InlineFieldRow>
      <RunPickerField
        label="Run"
        inputId="density-query-run"
        tooltip={tooltip ?? 'A run id, the latest run, a dashboard variable such as $run, or the dashboard time range'}
        datasource={datasource}
        value={query.run ?? fallback}
        range={range}
        special={special}
        onChange={(run) => change({ ...query, run })}
      />
    </InlineFieldRow>
  );
}

interface TextFieldProps extends TypeEditorProps {
  tooltip: string;
  placeholder: string;
}

/** The test-name field: a filter on most types, what changePoints searches. */
export function TestNameField({ query, change, onRunQuery, tooltip, placeholder }: TextFieldProps) {
  return (
    <InlineField label="Test name" labelWidth={LABEL_WIDTH} htmlFor="density-query-test-name" tooltip={tooltip}>
      <Input
        id="density-query-test-name"
        width={30}
        value={query.testName ?? ''}
        placeholder={placeholder}
        onChange={(e: ChangeEvent<HTMLInputElement>) =>
          change(withKey(query, 'testName', e.currentTarget.value), false)
        }
        onBlur={onRunQuery}
      />
    </InlineField>
  );
}

/**
 * Test name and tag: a filter of the listed runs (FILTERED_TYPES, whatever
 * the run), or what run latest is narrowed to (any other type).
 */
export function TestFilter(props: TypeEditorProps) {
  const { query, change, onRunQuery } = props;
  const always = query.queryType !== undefined && FILTERED_TYPES.includes(query.queryType);
  if (!always && query.run !== RUN_LATEST) {
    return null;
  }
  return (
    <InlineFieldRow>
      <TestNameField {...props} tooltip="Only runs of this test ($variables allowed)" placeholder="any test" />
      <InlineField
        label="Tag"
        labelWidth={8}
        htmlFor="density-query-tag"
        tooltip="Only runs with this tag, usually the commit under test"
      >
        <Input
          id="density-query-tag"
          width={24}
          value={query.tag ?? ''}
          placeholder="any tag"
          onChange={(e: ChangeEvent<HTMLInputElement>) => change(withKey(query, 'tag', e.currentTarget.value), false)}
          onBlur={onRunQuery}
        />
      </InlineField>
    </InlineFieldRow>
  );
}

interface RadioFieldProps<T> {
  label: string;
  tooltip?: string;
  options: Array<SelectableValue<T>>;
  value: T;
  onChange: (v: T) => void;
}

/** One labelled choice among a few options, as radio buttons. */
export function RadioField<T>({ label, tooltip, options, value, onChange }: RadioFieldProps<T>) {
  return (
    <InlineField label={label} labelWidth={LABEL_WIDTH} tooltip={tooltip}>
      <RadioButtonGroup<T> aria-label={label} options={options} value={value} onChange={onChange} />
    </InlineField>
  );
}

const ALIGN_OPTIONS = [
  { value: 'absolute' as AlignMode, label: 'Absolute', description: 'Each run at the time it ran' },
  {
    value: 'elapsed' as AlignMode,
    label: 'Elapsed',
    description: "Each run shifted so its steady start lands on the range's start: runs days apart overlay",
  },
];

/** Absolute or elapsed time axis of the per-run time-series types. */
export function AlignField({ query, change }: TypeEditorProps) {
  return (
    <InlineFieldRow>
      <RadioField<AlignMode>
        label="Align"
        tooltip="Elapsed overlays runs: each run's points shifted so its steady start lands on the start of the panel's time range, one frame per run"
        options={ALIGN_OPTIONS}
        value={query.align ?? 'absolute'}
        onChange={(v) => change(withKey(query, 'align', v === 'elapsed' ? v : undefined))}
      />
    </InlineFieldRow>
  );
}

interface KeysFieldProps extends TypeEditorProps {
  tooltip: string;
  placeholder: string;
}

/** A comma-separated (or listed) set of keys; blank removes it. Runs on blur. */
export function KeysField({ query, change, onRunQuery, tooltip, placeholder }: KeysFieldProps) {
  return (
    <InlineField label="Keys" labelWidth={8} htmlFor="density-query-keys" tooltip={tooltip}>
      <Input
        id="density-query-keys"
        width={48}
        value={Array.isArray(query.keys) ? query.keys.join(', ') : (query.keys ?? '')}
        placeholder={placeholder}
        onChange={(e: ChangeEvent<HTMLInputElement>) => {
          const v = e.currentTarget.value;
          change(withKey(query, 'keys', v.trim() === '' ? undefined : v), false);
        }}
        onBlur={onRunQuery}
      />
    </InlineField>
  );
}

const FORMAT_OPTIONS = [
  { value: 'table' as Format, label: 'Table', description: 'Rows to read: one per run, gate or step' },
  {
    value: 'numeric' as Format,
    label: 'Numeric',
    description: 'One number per frame (numeric-multi), labelled, for alert rules and recording rules',
  },
];

interface NumericOptionsProps extends TypeEditorProps {
  /** What the keys name for this type, e.g. "summary keys". */
  keysTooltip: string;
  keysPlaceholder: string;
}

/**
 * format, and for numeric the keys answered and whether the run and tag
 * labels are added (summary, gates, ladder).
 */
export function NumericOptions(props: NumericOptionsProps) {
  const { query, change, keysTooltip, keysPlaceholder } = props;
  const numeric = query.format === 'numeric';
  return (
    <>
      <InlineFieldRow>
        <RadioField<Format>
          label="Format"
          tooltip="Numeric answers one frame per number with stable labels, which Grafana alert rules and recording rules read"
          options={FORMAT_OPTIONS}
          value={query.format ?? 'table'}
          onChange={(v) => {
            let next = withKey(query, 'format', v === 'numeric' ? v : undefined);
            if (v !== 'numeric') {
              next = withKey(withKey(next, 'keys', undefined), 'labels', undefined);
            }
            change(next);
          }}
        />
      </InlineFieldRow>
      {numeric && (
        <InlineFieldRow>
          <KeysField {...props} tooltip={keysTooltip} placeholder={keysPlaceholder} />
          <InlineField
            label="Run labels"
            labelWidth={16}
            htmlFor="density-query-labels"
            tooltip="Also label each number with run and tag. Off for alert rules: a label that changes every run makes a new alert instance and a new recorded series each night."
          >
            <InlineSwitch
              id="density-query-labels"
              value={query.labels === 'run'}
              onChange={(e: React.FormEvent<HTMLInputElement>) =>
                change(withKey(query, 'labels', e.currentTarget.checked ? 'run' : undefined))
              }
            />
          </InlineField>
        </InlineFieldRow>
      )}
    </>
  );
}
