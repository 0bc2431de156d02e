import React, { ChangeEvent } from 'react';
import { css } from '@emotion/css';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { InlineField, InlineSwitch, Input, SecretInput, SecretTextArea, TextArea } from '@grafana/ui';

import { BYTES_PER_MIB, DEFAULTS, DensityOptions, DensitySecureJsonData } from '../../types';

/** What the config editor hands each section: Grafana's own editor props. */
export type SectionProps = DataSourcePluginOptionsEditorProps<DensityOptions, DensitySecureJsonData>;

type NumberKey =
  | 'runGapSeconds'
  | 'ateletLagSeconds'
  | 'timeoutSeconds'
  | 'maxConcurrentQueries'
  | 'liveFactsMaxAgeSeconds'
  | 'cacheEntries'
  | 'maxSeries'
  | 'topSeries'
  | 'maxRangeDays'
  | 'maxRunsPerQuery'
  | 'storedRunCacheMiB';
type TextKey =
  | 'resultsStore'
  | 'userCountQuery'
  | 'workerPool'
  | 'workerNamespace'
  | 'workerContainer'
  | 'workerPodRegex'
  | 'ateletNamespace'
  | 'ateletContainer'
  | 'kubeconfigPath'
  | 'kubeContext'
  | 'kubernetesURL'
  | 'exploreDatasourceUid';
/** Settings holding a YAML document: gates and acknowledgements (verdicts.md), the ladder profile (ladder-steps.md). */
type YamlKey = 'gates' | 'acks' | 'ladderProfile';
type SecretKey = 'bearerToken' | 'kubeconfig' | 'kubernetesToken' | 'kubernetesCACert';
type SwitchKey = 'preferStored' | 'discoverRuns';

export const LABEL_WIDTH = 28;
export const INPUT_WIDTH = 48;

const monospace = css({ fontFamily: 'monospace' });

export function hasAny(jsonData: DensityOptions, keys: Array<keyof DensityOptions>): boolean {
  return keys.some((k) => jsonData[k] !== undefined && jsonData[k] !== '');
}

/**
 * The field builders every section uses. Defaults are placeholders and never
 * written: an untouched field stays out of jsonData so the backend's
 * defaults apply. Secrets are write-only: a configured one shows as
 * "configured" with Reset.
 */
export function configFields({ options, onOptionsChange }: SectionProps) {
  const { jsonData } = options;
  const secureFields = options.secureJsonFields ?? {};
  const secureData = options.secureJsonData ?? {};

  /** Sets one jsonData key; undefined removes it so the default applies again. */
  const setJson = <K extends keyof DensityOptions>(key: K, value: DensityOptions[K] | undefined) => {
    const next: DensityOptions = { ...jsonData };
    if (value === undefined) {
      delete next[key];
    } else {
      next[key] = value;
    }
    onOptionsChange({ ...options, jsonData: next });
  };

  const onText = (key: TextKey) => (e: ChangeEvent<HTMLInputElement>) => {
    const v = e.currentTarget.value;
    setJson(key, v.trim() === '' ? undefined : v);
  };

  // Whole numbers only: the backend reads these keys as integers.
  const onNumber = (key: NumberKey) => (e: ChangeEvent<HTMLInputElement>) => {
    const raw = e.currentTarget.value.trim();
    if (raw === '') {
      setJson(key, undefined);
      return;
    }
    const n = Number(raw);
    if (Number.isFinite(n)) {
      setJson(key, Math.round(n));
    }
  };

  const onMaxResponseMiB = (e: ChangeEvent<HTMLInputElement>) => {
    const raw = e.currentTarget.value.trim();
    const n = Number(raw);
    if (raw === '') {
      setJson('maxResponseBytes', undefined);
    } else if (Number.isFinite(n)) {
      setJson('maxResponseBytes', Math.round(n * BYTES_PER_MIB));
    }
  };

  const setSecret = (key: SecretKey, value: string) =>
    onOptionsChange({ ...options, secureJsonData: { ...secureData, [key]: value } });

  const resetSecret = (key: SecretKey) =>
    onOptionsChange({
      ...options,
      secureJsonData: { ...secureData, [key]: '' },
      secureJsonFields: { ...secureFields, [key]: false },
    });

  /** A write-only secret on one line; Reset forgets a configured one. */
  const secretInput = (key: SecretKey, id: string, placeholder: string, width = INPUT_WIDTH) => (
    <SecretInput
      id={id}
      width={width}
      isConfigured={Boolean(secureFields[key])}
      value={secureData[key] ?? ''}
      placeholder={placeholder}
      onChange={(e: ChangeEvent<HTMLInputElement>) => setSecret(key, e.currentTarget.value)}
      onReset={() => resetSecret(key)}
    />
  );

  const secretTextArea = (key: SecretKey, id: string, placeholder: string) => (
    <SecretTextArea
      id={id}
      cols={INPUT_WIDTH + 12}
      rows={6}
      isConfigured={Boolean(secureFields[key])}
      value={secureData[key] ?? ''}
      placeholder={placeholder}
      onChange={(e: ChangeEvent<HTMLTextAreaElement>) => setSecret(key, e.currentTarget.value)}
      onReset={() => resetSecret(key)}
    />
  );

  /** A secret in a labelled field: one line, or a text area (kubeconfig, PEM). */
  const secretField = (key: SecretKey, label: string, tooltip: string, placeholder: string, area = false) => (
    <InlineField label={label} labelWidth={LABEL_WIDTH} htmlFor={`density-${key}`} tooltip={tooltip}>
      {area ? secretTextArea(key, `density-${key}`, placeholder) : secretInput(key, `density-${key}`, placeholder)}
    </InlineField>
  );

  /** An on/off setting; unset shows its default. */
  const switchField = (key: SwitchKey, label: string, tooltip?: string) => (
    <InlineField label={label} labelWidth={LABEL_WIDTH} htmlFor={`density-${key}`} tooltip={tooltip}>
      <InlineSwitch
        id={`density-${key}`}
        value={jsonData[key] ?? DEFAULTS[key]}
        onChange={(e: React.FormEvent<HTMLInputElement>) => setJson(key, e.currentTarget.checked)}
        disabled={options.readOnly}
      />
    </InlineField>
  );

  const textField = (key: TextKey, label: string, tooltip: string, placeholder: string) => (
    <InlineField label={label} labelWidth={LABEL_WIDTH} tooltip={tooltip} htmlFor={`density-${key}`} interactive>
      <Input
        id={`density-${key}`}
        width={INPUT_WIDTH}
        value={(jsonData[key] as string | undefined) ?? ''}
        placeholder={placeholder}
        onChange={onText(key)}
        disabled={options.readOnly}
      />
    </InlineField>
  );

  const numberField = (key: NumberKey, label: string, tooltip: string, placeholder: string) => (
    <InlineField label={label} labelWidth={LABEL_WIDTH} tooltip={tooltip} htmlFor={`density-${key}`} interactive>
      <Input
        id={`density-${key}`}
        type="number"
        min={0}
        width={INPUT_WIDTH / 2}
        value={jsonData[key] ?? ''}
        placeholder={placeholder}
        onChange={onNumber(key)}
        disabled={options.readOnly}
      />
    </InlineField>
  );

  // Kept as typed (YAML is whitespace-sensitive); blank text removes the key.
  const yamlField = (key: YamlKey, label: string, tooltip: string, placeholder: string) => (
    <InlineField label={label} labelWidth={LABEL_WIDTH} tooltip={tooltip} htmlFor={`density-${key}`} interactive>
      <TextArea
        id={`density-${key}`}
        cols={INPUT_WIDTH + 12}
        rows={6}
        value={jsonData[key] ?? ''}
        placeholder={placeholder}
        onChange={(e: ChangeEvent<HTMLTextAreaElement>) => {
          const v = e.currentTarget.value;
          setJson(key, v.trim() === '' ? undefined : v);
        }}
        disabled={options.readOnly}
        className={monospace}
      />
    </InlineField>
  );

  return { setJson, onMaxResponseMiB, secretInput, secretField, switchField, textField, numberField, yamlField };
}
