import React, { ChangeEvent, useState } from 'react';
import { css } from '@emotion/css';
import { DataSourcePluginOptionsEditorProps, DataSourceSettings } from '@grafana/data';
import { Auth, AuthMethod, ConfigSection, ConfigSubSection, convertLegacyAuthProps } from '@grafana/plugin-ui';
import {
  Divider,
  InlineField,
  InlineSwitch,
  Input,
  RadioButtonGroup,
  SecretInput,
  SecretTextArea,
  Stack,
  Text,
  TextArea,
} from '@grafana/ui';

import { BYTES_PER_MIB, DEFAULTS, DensityOptions, DensitySecureJsonData, KubernetesAccess } from '../types';

type Props = DataSourcePluginOptionsEditorProps<DensityOptions, DensitySecureJsonData>;
type Settings = DataSourceSettings<DensityOptions, DensitySecureJsonData>;

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
  | 'kubernetesURL';
/** Settings holding a YAML document: gates and acknowledgements (verdicts.md), the ladder profile (ladder-steps.md). */
type YamlKey = 'gates' | 'acks' | 'ladderProfile';
type SecretKey = 'bearerToken' | 'kubeconfig' | 'kubernetesToken' | 'kubernetesCACert';

/** The bearer-token method added to plugin-ui's auth picker (value: secureJsonData.bearerToken). */
export const BEARER_METHOD = 'custom-bearer' as const;

const KUBERNETES_ACCESS_OPTIONS: Array<{ value: KubernetesAccess; label: string; description: string }> = [
  { value: 'off', label: 'Off', description: 'No Kubernetes calls; cluster facts of live runs are null' },
  { value: 'inCluster', label: 'In-cluster', description: "The Grafana pod's service account" },
  { value: 'kubeconfig', label: 'Kubeconfig', description: 'A kubeconfig file on the Grafana server, or pasted' },
  { value: 'token', label: 'Token', description: 'API server URL and a bearer token' },
];

const LABEL_WIDTH = 28;
const INPUT_WIDTH = 48;

/**
 * Settings of one Density datasource. Defaults are shown as placeholders and
 * never written: an untouched field stays out of jsonData so the backend's
 * defaults (the same values, see DEFAULTS) apply and can change with it.
 * Secrets are write-only: a configured one shows as "configured" with Reset.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
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

  const secretInput = (key: SecretKey, id: string, placeholder: string) => (
    <SecretInput
      id={id}
      width={INPUT_WIDTH}
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

  const access: KubernetesAccess = jsonData.kubernetesAccess ?? DEFAULTS.kubernetesAccess;

  return (
    <Stack direction="column" gap={2}>
      <ConfigSection
        title="Prometheus"
        description="The Prometheus-compatible API holding the benchmark's metrics (Prometheus, Mimir, Cortex, Thanos, VictoriaMetrics). Authentication, TLS and headers below apply to every request, health checks included."
      >
        <InlineField
          label="Prometheus URL"
          labelWidth={LABEL_WIDTH}
          htmlFor="density-url"
          required
          tooltip="Base URL without /api/v1, e.g. http://prometheus.monitoring:9090 or https://mimir.example/prometheus"
          invalid={Boolean(options.url) && !/^https?:\/\/\S+$/.test(options.url)}
          error="Use an http:// or https:// URL"
        >
          <Input
            id="density-url"
            width={INPUT_WIDTH}
            value={options.url ?? ''}
            placeholder="http://prometheus:9090"
            onChange={(e: ChangeEvent<HTMLInputElement>) => onOptionsChange({ ...options, url: e.currentTarget.value })}
            disabled={options.readOnly}
          />
        </InlineField>
      </ConfigSection>

      <PrometheusAuth options={options} onOptionsChange={onOptionsChange} />

      <Divider />

      <ConfigSection
        title="Results store"
        description="Where the benchmark orchestrator uploads runs (runs/<test>/run_date=…/run_ts=…/run_tag=…/). Credentials come from the Grafana server's environment (e.g. GOOGLE_APPLICATION_CREDENTIALS, AWS_*)."
      >
        {textField(
          'resultsStore',
          'Results store URL',
          'A local path, file://, gs://bucket/prefix, s3://bucket/prefix or azblob://container/prefix. Leave empty to use Prometheus discovery only.',
          'gs://bucket/prefix (optional)'
        )}
        <InlineField
          label="Prefer stored"
          labelWidth={LABEL_WIDTH}
          htmlFor="density-preferStored"
          tooltip="Read a stored run's numbers from its artifacts (server_summary.json, stats.jsonl, psi_series.json) with no Prometheus request. Off forces the harvest, e.g. to check an artifact."
        >
          <InlineSwitch
            id="density-preferStored"
            value={jsonData.preferStored ?? DEFAULTS.preferStored}
            onChange={(e: React.FormEvent<HTMLInputElement>) => setJson('preferStored', e.currentTarget.checked)}
            disabled={options.readOnly}
          />
        </InlineField>
        <ConfigSubSection
          title="Run discovery from Prometheus"
          description="A run is an interval in which the user-count series is above 0; runs are split where it stays at 0 or absent for longer than the gap."
        >
          <InlineField label="Discover runs" labelWidth={LABEL_WIDTH} htmlFor="density-discoverRuns">
            <InlineSwitch
              id="density-discoverRuns"
              value={jsonData.discoverRuns ?? DEFAULTS.discoverRuns}
              onChange={(e: React.FormEvent<HTMLInputElement>) => setJson('discoverRuns', e.currentTarget.checked)}
              disabled={options.readOnly}
            />
          </InlineField>
          {textField(
            'userCountQuery',
            'User-count query',
            'PromQL for the number of simulated users; also gives ad hoc runs their steady window.',
            DEFAULTS.userCountQuery
          )}
          {numberField(
            'runGapSeconds',
            'Run gap (s)',
            'Longest stretch at 0 users inside one run.',
            String(DEFAULTS.runGapSeconds)
          )}
        </ConfigSubSection>
      </ConfigSection>

      <Divider />

      <ConfigSection
        title="Verdicts"
        description="Gates and change-point acknowledgements for the gates and changePoints queries, over the runs of the results store."
        isCollapsible
        isInitiallyOpen={hasAny(jsonData, VERDICT_KEYS)}
      >
        {yamlField(
          'gates',
          'Gates (YAML)',
          "A gates file: a list of gates, each a key with min, max or max_regression_pct (against the query's baseline) and optional allow_null and direction. Checked by each gates query.",
          GATES_PLACEHOLDER
        )}
        {yamlField(
          'acks',
          'Acknowledgements (YAML)',
          "A list of {key, run, reason}, added to the store's runs/<test_name>/acks.yaml: the change point of key whose segment holds run is acknowledged (it stays visible, acknowledged true). A malformed list makes the settings invalid.",
          ACKS_PLACEHOLDER
        )}
      </ConfigSection>

      <Divider />

      <ConfigSection
        title="Ladder"
        description="The figures of each load step when a stored ladder run without ladder rows is evaluated from its logs.txt (stored rows are shown as exported)."
        isCollapsible
        isInitiallyOpen={hasAny(jsonData, ['ladderProfile'])}
      >
        {yamlField(
          'ladderProfile',
          'Ladder profile (YAML)',
          'A list of {key, query, reduce} replacing the built-in profile (print it with density ladder --print-profile); reduce is growth, growth_rate, mean, max, min or quantile:<q>. Checked by each ladder query.',
          LADDER_PLACEHOLDER
        )}
      </ConfigSection>

      <Divider />

      <ConfigSection
        title="Kubernetes"
        description="Cluster facts (nodes, worker pods, limits, OOM kills, evictions) of live runs, and the phase breakdown of recent runs from their pod logs. Needs list on nodes, pods and events, and get on pods/log for the phases. Stored runs use their stored facts and phase rows."
      >
        <InlineField label="Access" labelWidth={LABEL_WIDTH}>
          <RadioButtonGroup<KubernetesAccess>
            aria-label="Kubernetes access"
            options={KUBERNETES_ACCESS_OPTIONS}
            value={access}
            onChange={(kubernetesAccess) => setJson('kubernetesAccess', kubernetesAccess)}
            disabled={options.readOnly}
          />
        </InlineField>
        {access === 'inCluster' && (
          <Text color="secondary" variant="bodySmall">
            Uses the service account of the pod Grafana runs in.
          </Text>
        )}
        {access === 'kubeconfig' && (
          <>
            {textField(
              'kubeconfigPath',
              'Kubeconfig path',
              'A kubeconfig file readable by the Grafana server, self-contained like a pasted one: inline token or certificate data; exec plugins, auth providers and file references are refused. Leave empty to use the pasted kubeconfig below.',
              '/etc/grafana/kubeconfig'
            )}
            {textField(
              'kubeContext',
              'Context',
              'Context in the kubeconfig; empty means its current-context.',
              'current-context'
            )}
            <InlineField
              label="Pasted kubeconfig"
              labelWidth={LABEL_WIDTH}
              htmlFor="density-kubeconfig"
              tooltip="Used when no path is set; stored encrypted. Inline data only: exec plugins, auth providers and file references are refused."
            >
              {secretTextArea('kubeconfig', 'density-kubeconfig', 'apiVersion: v1\nkind: Config\n…')}
            </InlineField>
          </>
        )}
        {access === 'token' && (
          <>
            {textField(
              'kubernetesURL',
              'API server URL',
              'The Kubernetes API server, https:// only (the token is never sent in clear text).',
              'https://kubernetes.example:6443'
            )}
            <InlineField
              label="Service-account token"
              labelWidth={LABEL_WIDTH}
              htmlFor="density-kubernetesToken"
              tooltip="Bearer token of a service account with list on nodes, pods and events."
            >
              {secretInput('kubernetesToken', 'density-kubernetesToken', 'Service-account token')}
            </InlineField>
            <InlineField
              label="API server CA"
              labelWidth={LABEL_WIDTH}
              htmlFor="density-kubernetesCACert"
              tooltip="PEM of the API server's CA; empty uses the system roots."
            >
              {secretTextArea('kubernetesCACert', 'density-kubernetesCACert', '-----BEGIN CERTIFICATE-----')}
            </InlineField>
          </>
        )}
        {access !== 'off' &&
          numberField(
            'liveFactsMaxAgeSeconds',
            'Live facts max age (s)',
            'Read the live cluster only for runs that ended less than this long ago; older runs without stored facts get null.',
            String(DEFAULTS.liveFactsMaxAgeSeconds)
          )}
      </ConfigSection>

      <Divider />

      <ConfigSection
        title="Selectors"
        description="Names the harvest PromQL and Kubernetes reads select on."
        isCollapsible
        isInitiallyOpen={hasAny(jsonData, SELECTOR_KEYS)}
      >
        {textField('workerPool', 'Worker pool', 'Worker pool name (label ate.dev/worker-pool).', DEFAULTS.workerPool)}
        {textField('workerNamespace', 'Worker namespace', 'Namespace of the worker pods.', DEFAULTS.workerNamespace)}
        {textField('workerContainer', 'Worker container', 'Container name of the workers.', DEFAULTS.workerContainer)}
        {textField(
          'workerPodRegex',
          'Worker pod regex',
          'RE2 matched against worker pod names.',
          DEFAULTS.workerPodRegex
        )}
        {textField('ateletNamespace', 'Atelet namespace', 'Namespace of the atelet pods.', DEFAULTS.ateletNamespace)}
        {textField('ateletContainer', 'Atelet container', 'Container name of the atelets.', DEFAULTS.ateletContainer)}
      </ConfigSection>

      <Divider />

      <ConfigSection
        title="Advanced"
        description="Timing, concurrency and cache."
        isCollapsible
        isInitiallyOpen={hasAny(jsonData, ADVANCED_KEYS)}
      >
        {numberField(
          'ateletLagSeconds',
          'Atelet lag (s)',
          'How late atelet metrics reach Prometheus. Runs that ended less than this ago get a notice that atelet data may be incomplete.',
          String(DEFAULTS.ateletLagSeconds)
        )}
        {numberField(
          'timeoutSeconds',
          'Request timeout (s)',
          `Per Prometheus request. Unset: ${DEFAULTS.timeoutInstantSeconds} s for instant and ${DEFAULTS.timeoutRangeSeconds} s for range queries; a value overrides both.`,
          `${DEFAULTS.timeoutInstantSeconds} / ${DEFAULTS.timeoutRangeSeconds}`
        )}
        {numberField(
          'maxConcurrentQueries',
          'Max queries in flight',
          'Prometheus requests one datasource runs at once.',
          String(DEFAULTS.maxConcurrentQueries)
        )}
        {numberField(
          'cacheEntries',
          'Cache entries',
          'Harvested blocks of finished runs kept in memory (LRU).',
          String(DEFAULTS.cacheEntries)
        )}
        {numberField(
          'maxSeries',
          'Max series',
          'Per-node or per-pod series a PSI panel shows; above this it shows bands across the series (min, p50, p90, p99, max) and the top series.',
          String(DEFAULTS.maxSeries)
        )}
        {numberField(
          'topSeries',
          'Top series',
          'Series with the highest peak shown with the bands.',
          String(DEFAULTS.topSeries)
        )}
        {numberField(
          'maxRangeDays',
          'Max range (days)',
          'Longest dashboard range read from Prometheus: a longer ad hoc run (run: range) is refused; run discovery covers the newest days of a longer range.',
          String(DEFAULTS.maxRangeDays)
        )}
        {numberField(
          'maxRunsPerQuery',
          'Max runs per query',
          'Stored runs one query reads from the results store; of more, the newest are read.',
          String(DEFAULTS.maxRunsPerQuery)
        )}
        {numberField(
          'storedRunCacheMiB',
          'Stored-run cache (MiB)',
          'Parsed rows of finished stored runs kept in memory, read once and shared by every query; 0 keeps none.',
          String(DEFAULTS.storedRunCacheMiB)
        )}
        <InlineField
          label="Max response (MiB)"
          labelWidth={LABEL_WIDTH}
          htmlFor="density-maxResponseMiB"
          tooltip="Largest Prometheus response body read; stored in bytes (maxResponseBytes)."
        >
          <Input
            id="density-maxResponseMiB"
            type="number"
            min={0}
            width={INPUT_WIDTH / 2}
            value={jsonData.maxResponseBytes === undefined ? '' : jsonData.maxResponseBytes / BYTES_PER_MIB}
            placeholder={String(DEFAULTS.maxResponseBytes / BYTES_PER_MIB)}
            onChange={onMaxResponseMiB}
            disabled={options.readOnly}
          />
        </InlineField>
      </ConfigSection>
    </Stack>
  );
}

const SELECTOR_KEYS: Array<keyof DensityOptions> = [
  'workerPool',
  'workerNamespace',
  'workerContainer',
  'workerPodRegex',
  'ateletNamespace',
  'ateletContainer',
];
const VERDICT_KEYS: Array<keyof DensityOptions> = ['gates', 'acks'];
const GATES_PLACEHOLDER =
  'gates:\n  - key: cluster_packing_p50\n    min: 0.8\n  - key: restore_p99_s\n    max_regression_pct: 10';
const ACKS_PLACEHOLDER = '- key: restore_p99_s\n  run: nightly/1710237601/c0ffee1\n  reason: slower restores expected';
const LADDER_PLACEHOLDER =
  '- key: resume_rps\n  query: locust_requests_total{name="${resume_name}", status="success"}\n  reduce: growth_rate';
const monospace = css({ fontFamily: 'monospace' });
const ADVANCED_KEYS: Array<keyof DensityOptions> = [
  'ateletLagSeconds',
  'timeoutSeconds',
  'maxConcurrentQueries',
  'cacheEntries',
  'maxSeries',
  'topSeries',
  'maxRangeDays',
  'maxRunsPerQuery',
  'storedRunCacheMiB',
  'maxResponseBytes',
];

function hasAny(jsonData: DensityOptions, keys: Array<keyof DensityOptions>): boolean {
  return keys.some((k) => jsonData[k] !== undefined && jsonData[k] !== '');
}

/**
 * Prometheus authentication through plugin-ui's Auth (basic auth, TLS,
 * custom headers as httpHeaderNameN/httpHeaderValueN) plus a bearer-token
 * method. Choosing another method clears a stored bearer token, so exactly
 * one credential is in play.
 */
function PrometheusAuth({ options, onOptionsChange }: Props) {
  const secureFields = options.secureJsonFields ?? {};
  const secureData = options.secureJsonData ?? {};
  const bearerSet = Boolean(secureFields.bearerToken) || Boolean(secureData.bearerToken);
  const [bearerChosen, setBearerChosen] = useState(bearerSet);

  const legacy = convertLegacyAuthProps<Settings>({ config: options, onChange: onOptionsChange });
  const selectedMethod = options.basicAuth
    ? AuthMethod.BasicAuth
    : bearerSet || bearerChosen
      ? BEARER_METHOD
      : AuthMethod.NoAuth;

  const onAuthMethodSelect = (method: string) => {
    setBearerChosen(method === BEARER_METHOD);
    let next: Settings = { ...options, basicAuth: method === AuthMethod.BasicAuth };
    if (method !== BEARER_METHOD && bearerSet) {
      next = {
        ...next,
        secureJsonData: { ...secureData, bearerToken: '' },
        secureJsonFields: { ...secureFields, bearerToken: false },
      };
    }
    onOptionsChange(next);
  };

  const bearer = (
    <InlineField
      label="Bearer token"
      labelWidth={LABEL_WIDTH - 8}
      htmlFor="density-bearerToken"
      tooltip="Sent as Authorization: Bearer <token>."
    >
      <SecretInput
        id="density-bearerToken"
        width={36}
        isConfigured={Boolean(secureFields.bearerToken)}
        value={secureData.bearerToken ?? ''}
        placeholder="Token"
        onChange={(e: ChangeEvent<HTMLInputElement>) =>
          onOptionsChange({ ...options, secureJsonData: { ...secureData, bearerToken: e.currentTarget.value } })
        }
        onReset={() =>
          onOptionsChange({
            ...options,
            secureJsonData: { ...secureData, bearerToken: '' },
            secureJsonFields: { ...secureFields, bearerToken: false },
          })
        }
      />
    </InlineField>
  );

  return (
    <div className={authStyles}>
      <Auth
        {...legacy}
        selectedMethod={selectedMethod}
        onAuthMethodSelect={onAuthMethodSelect}
        visibleMethods={[AuthMethod.NoAuth, AuthMethod.BasicAuth, BEARER_METHOD]}
        customMethods={[
          {
            id: BEARER_METHOD,
            label: 'Bearer token',
            description: 'Send a static token in the Authorization header',
            component: bearer,
          },
        ]}
      />
    </div>
  );
}

/**
 * plugin-ui's custom header gives its value input min-width: 100%, so the
 * Reset button of a configured value is pushed out of its field and drawn
 * over the remove-header button. Letting that input shrink keeps Reset in
 * the field. (Found in Chromium by internal/gallerytest; jsdom has no layout.)
 */
const authStyles = css({
  'div:has(> div > input[id^="custom-header-"][id$="-value-input"])': { minWidth: 0, flexGrow: 1 },
});
