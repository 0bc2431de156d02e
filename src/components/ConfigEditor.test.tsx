import React, { useState } from 'react';
import { DataSourceSettings } from '@grafana/data';
import { fireEvent, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { settings } from '../testing/fixtures';
import { DensityOptions, DensitySecureJsonData } from '../types';
import { ConfigEditor } from './ConfigEditor';

type Settings = DataSourceSettings<DensityOptions, DensitySecureJsonData>;

function setup(overrides: Partial<Settings> = {}) {
  const onOptionsChange = jest.fn<void, [Settings]>();
  const options = settings(overrides);
  const utils = render(<ConfigEditor options={options} onOptionsChange={onOptionsChange} />);
  const last = (): Settings => onOptionsChange.mock.calls[onOptionsChange.mock.calls.length - 1][0];
  return { ...utils, onOptionsChange, options, last };
}

/** Keeps the options in state, as Grafana's settings page does, for multi-step interactions. */
function Stateful({ initial, spy }: { initial: Settings; spy: (s: Settings) => void }) {
  const [options, setOptions] = useState(initial);
  return (
    <ConfigEditor
      options={options}
      onOptionsChange={(o) => {
        spy(o);
        setOptions(o);
      }}
    />
  );
}

/** Opens a collapsible section if it is closed (label queries: role queries are slow on a page this size). */
async function expand(section: string) {
  const button = screen.queryByLabelText(`Expand section ${section}`);
  if (button) {
    await userEvent.click(button);
  }
}

describe('ConfigEditor renders', () => {
  it('shows the five sections plus authentication', () => {
    setup();
    for (const title of [
      'Prometheus',
      'Authentication',
      'Results store',
      'Verdicts',
      'Kubernetes',
      'Selectors',
      'Advanced',
    ]) {
      expect(screen.getByText(title, { selector: 'h3' })).toBeInTheDocument();
    }
    for (const title of ['Authentication methods', 'TLS settings', 'HTTP headers', 'Run discovery from Prometheus']) {
      expect(screen.getByText(title, { selector: 'h6' })).toBeInTheDocument();
    }
  });

  it('shows every default as a placeholder and writes nothing on render', async () => {
    const { onOptionsChange } = setup();
    await expand('Selectors');
    await expand('Advanced');
    const placeholders: Array<[string, string]> = [
      ['Prometheus URL', 'http://prometheus:9090'],
      ['Results store URL', 'gs://bucket/prefix (optional)'],
      ['User-count query', 'sum(locust_users)'],
      ['Run gap (s)', '120'],
      ['Worker pool', 'benchmark-ateom'],
      ['Worker namespace', 'benchmark-workloads'],
      ['Worker container', 'ateom'],
      ['Worker pod regex', 'benchmark-ateom.*'],
      ['Atelet namespace', 'ate-system'],
      ['Atelet container', 'atelet'],
      ['Atelet lag (s)', '70'],
      ['Request timeout (s)', '5 / 8'],
      ['Max queries in flight', '8'],
      ['Cache entries', '256'],
      ['Max response (MiB)', '64'],
    ];
    for (const [label, placeholder] of placeholders) {
      const input = screen.getByLabelText(label, { exact: false });
      expect(input).toHaveAttribute('placeholder', placeholder);
      expect(input).toHaveValue(input.getAttribute('type') === 'number' ? null : '');
    }
    expect(screen.getByLabelText('Discover runs')).toBeChecked();
    expect(screen.getByLabelText('Off')).toBeChecked();
    expect(onOptionsChange).not.toHaveBeenCalled();
  });

  it('opens Selectors and Advanced when they hold values', () => {
    setup({ jsonData: { workerNamespace: 'bench', maxResponseBytes: 128 * 1024 * 1024 } });
    expect(screen.getByLabelText('Worker namespace')).toHaveValue('bench');
    expect(screen.getByLabelText('Max response (MiB)')).toHaveValue(128);
  });
});

describe('ConfigEditor emits settings', () => {
  it('sets the Prometheus URL on the datasource itself', () => {
    const { last } = setup();
    fireEvent.change(screen.getByLabelText('Prometheus URL', { exact: false }), {
      target: { value: 'http://prom:9090' },
    });
    expect(last().url).toBe('http://prom:9090');
    expect(last().jsonData).toEqual({});
  });

  it.each<[string, string, Partial<DensityOptions>]>([
    ['Results store URL', 'gs://bench/results', { resultsStore: 'gs://bench/results' }],
    ['User-count query', 'sum(locust_users{job="l"})', { userCountQuery: 'sum(locust_users{job="l"})' }],
    ['Run gap (s)', '300', { runGapSeconds: 300 }],
    ['Worker pool', 'pool-b', { workerPool: 'pool-b' }],
    ['Worker namespace', 'bench', { workerNamespace: 'bench' }],
    ['Worker container', 'w', { workerContainer: 'w' }],
    ['Worker pod regex', 'pool-b-.*', { workerPodRegex: 'pool-b-.*' }],
    ['Atelet namespace', 'ate', { ateletNamespace: 'ate' }],
    ['Atelet container', 'agent', { ateletContainer: 'agent' }],
    ['Atelet lag (s)', '90', { ateletLagSeconds: 90 }],
    ['Request timeout (s)', '12', { timeoutSeconds: 12 }],
    ['Max queries in flight', '4', { maxConcurrentQueries: 4 }],
    ['Cache entries', '1024', { cacheEntries: 1024 }],
    ['Max series', '20', { maxSeries: 20 }],
    ['Top series', '5', { topSeries: 5 }],
    ['Max range (days)', '7', { maxRangeDays: 7 }],
    ['Max runs per query', '100', { maxRunsPerQuery: 100 }],
    ['Max response (MiB)', '32', { maxResponseBytes: 33554432 }],
    ['Atelet lag (s)', '2.6', { ateletLagSeconds: 3 }],
  ])('%s = %s', async (label, value, want) => {
    const { last } = setup({ jsonData: { ateletContainer: 'keep-me' } });
    await expand('Selectors');
    await expand('Advanced');
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    expect(last().jsonData).toEqual({ ateletContainer: 'keep-me', ...want });
  });

  it.each<[string, Partial<DensityOptions>]>([
    ['Atelet lag (s)', { ateletLagSeconds: 90 }],
    ['Max response (MiB)', { maxResponseBytes: 1024 }],
    ['User-count query', { userCountQuery: 'x' }],
  ])('clearing %s removes the key so the default applies', (label, jsonData) => {
    const { last } = setup({ jsonData: { ...jsonData, workerPool: 'p', ateletLagSeconds: 1 } });
    fireEvent.change(screen.getByLabelText(label), { target: { value: '' } });
    const key = Object.keys(jsonData)[0];
    expect(last().jsonData).not.toHaveProperty(key);
    expect(last().jsonData.workerPool).toBe('p');
  });

  it('turns run discovery off', async () => {
    const { last } = setup();
    await userEvent.click(screen.getByLabelText('Discover runs'));
    expect(last().jsonData).toEqual({ discoverRuns: false });
  });

  it('prefers stored artifacts by default and can force the harvest', async () => {
    const { last } = setup();
    expect(screen.getByLabelText('Prefer stored')).toBeChecked();
    await userEvent.click(screen.getByLabelText('Prefer stored'));
    expect(last().jsonData).toEqual({ preferStored: false });
  });
});

describe('ConfigEditor verdicts', () => {
  const GATES = 'gates:\n  - key: cluster_packing_p50\n    min: 0.8\n';
  const ACKS = '- key: restore_p99_s\n  run: nightly/1710237601/c12\n  reason: expected\n';

  it('is closed when neither gates nor acks is set', () => {
    setup();
    expect(screen.queryByLabelText('Gates (YAML)')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Acknowledgements (YAML)')).not.toBeInTheDocument();
  });

  it('opens with the stored YAML as typed', () => {
    setup({ jsonData: { gates: GATES, acks: ACKS } });
    expect(screen.getByLabelText('Gates (YAML)')).toHaveValue(GATES);
    expect(screen.getByLabelText('Acknowledgements (YAML)')).toHaveValue(ACKS);
  });

  it.each<[string, 'gates' | 'acks', string]>([
    ['Gates (YAML)', 'gates', GATES],
    ['Acknowledgements (YAML)', 'acks', ACKS],
  ])('%s writes %s with its whitespace kept', async (label, key, value) => {
    const { last } = setup({ jsonData: { workerPool: 'p' } });
    await expand('Verdicts');
    expect(screen.getByLabelText(label).getAttribute('placeholder')).toContain('restore_p99_s');
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    expect(last().jsonData).toEqual({ workerPool: 'p', [key]: value });
  });

  it('clearing the acks removes the key', () => {
    const { last } = setup({ jsonData: { acks: ACKS, gates: GATES } });
    fireEvent.change(screen.getByLabelText('Acknowledgements (YAML)'), { target: { value: '  \n' } });
    expect(last().jsonData).toEqual({ gates: GATES });
  });
});

describe('ConfigEditor ladder profile', () => {
  const PROFILE = '- key: resume_rps\n  query: locust_requests_total{status="success"}\n  reduce: growth_rate\n';

  it('is closed until a profile is set, then writes it as typed', async () => {
    const { last } = setup({ jsonData: { workerPool: 'p' } });
    expect(screen.queryByLabelText('Ladder profile (YAML)')).not.toBeInTheDocument();
    await expand('Ladder');
    fireEvent.change(screen.getByLabelText('Ladder profile (YAML)'), { target: { value: PROFILE } });
    expect(last().jsonData).toEqual({ workerPool: 'p', ladderProfile: PROFILE });
  });

  it('opens with the stored profile, and clearing it removes the key', () => {
    const { last } = setup({ jsonData: { ladderProfile: PROFILE } });
    expect(screen.getByLabelText('Ladder profile (YAML)')).toHaveValue(PROFILE);
    fireEvent.change(screen.getByLabelText('Ladder profile (YAML)'), { target: { value: '' } });
    expect(last().jsonData).toEqual({});
  });
});

describe('ConfigEditor Kubernetes access', () => {
  const modeFields: Array<[string, string[], string[]]> = [
    [
      'off',
      [],
      [
        'Live facts max age (s)',
        'Kubeconfig path',
        'Context',
        'Pasted kubeconfig',
        'API server URL',
        'Service-account token',
        'API server CA',
      ],
    ],
    ['inCluster', ['Live facts max age (s)'], ['Kubeconfig path', 'API server URL', 'Service-account token']],
    [
      'kubeconfig',
      ['Kubeconfig path', 'Context', 'Pasted kubeconfig', 'Live facts max age (s)'],
      ['API server URL', 'Service-account token'],
    ],
    [
      'token',
      ['API server URL', 'Service-account token', 'API server CA', 'Live facts max age (s)'],
      ['Kubeconfig path', 'Pasted kubeconfig'],
    ],
  ];
  it.each(modeFields)('%s shows its own fields', (mode, shown, hidden) => {
    setup({ jsonData: { kubernetesAccess: mode as DensityOptions['kubernetesAccess'] } });
    for (const label of shown) {
      expect(screen.getByLabelText(label)).toBeInTheDocument();
    }
    for (const label of hidden) {
      expect(screen.queryByLabelText(label)).not.toBeInTheDocument();
    }
  });

  it.each([
    ['In-cluster', 'inCluster'],
    ['Kubeconfig', 'kubeconfig'],
    ['Token', 'token'],
  ])('choosing %s sets kubernetesAccess=%s', async (label, value) => {
    const { last } = setup();
    await userEvent.click(screen.getByLabelText(label));
    expect(last().jsonData).toEqual({ kubernetesAccess: value });
  });

  it('kubeconfig mode fields write their keys', () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings({ jsonData: { kubernetesAccess: 'kubeconfig' } })} spy={spy} />);
    fireEvent.change(screen.getByLabelText('Kubeconfig path'), { target: { value: '/etc/kube/config' } });
    fireEvent.change(screen.getByLabelText('Context'), { target: { value: 'bench' } });
    fireEvent.change(screen.getByLabelText('Live facts max age (s)'), { target: { value: '600' } });
    fireEvent.change(screen.getByLabelText('Pasted kubeconfig'), { target: { value: 'apiVersion: v1' } });
    const final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.jsonData).toEqual({
      kubernetesAccess: 'kubeconfig',
      kubeconfigPath: '/etc/kube/config',
      kubeContext: 'bench',
      liveFactsMaxAgeSeconds: 600,
    });
    expect(final.secureJsonData).toEqual({ kubeconfig: 'apiVersion: v1' });
  });

  it('token mode writes the URL to jsonData and the token and CA to secureJsonData', () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings({ jsonData: { kubernetesAccess: 'token' } })} spy={spy} />);
    fireEvent.change(screen.getByLabelText('API server URL'), { target: { value: 'https://k8s:6443' } });
    fireEvent.change(screen.getByLabelText('Service-account token'), { target: { value: 'tok-123' } });
    fireEvent.change(screen.getByLabelText('API server CA'), { target: { value: '-----BEGIN CERTIFICATE-----' } });
    const final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.jsonData).toEqual({ kubernetesAccess: 'token', kubernetesURL: 'https://k8s:6443' });
    expect(final.secureJsonData).toEqual({
      kubernetesToken: 'tok-123',
      kubernetesCACert: '-----BEGIN CERTIFICATE-----',
    });
  });
});

// Values Grafana never sends back to the browser; planted here to prove the editor would not show them anyway.
const PLANTED = {
  basicAuthPassword: 'PLANTED-basic-pw',
  bearerToken: 'PLANTED-bearer',
  kubeconfig: 'PLANTED-kubeconfig',
  kubernetesToken: 'PLANTED-k8s-token',
  kubernetesCACert: 'PLANTED-ca',
  httpHeaderValue1: 'PLANTED-tenant',
  tlsCACert: 'PLANTED-tls-ca',
};

describe('ConfigEditor secrets', () => {
  it.each<[string, Partial<Settings>, Array<string | RegExp>]>([
    ['bearer token', { secureJsonFields: { bearerToken: true } }, ['Bearer token']],
    [
      'basic auth password',
      { basicAuth: true, basicAuthUser: 'grafana', secureJsonFields: { basicAuthPassword: true } },
      [/^Password/],
    ],
    [
      'pasted kubeconfig',
      { jsonData: { kubernetesAccess: 'kubeconfig' }, secureJsonFields: { kubeconfig: true } },
      ['Pasted kubeconfig'],
    ],
    [
      'kubernetes token and CA',
      { jsonData: { kubernetesAccess: 'token' }, secureJsonFields: { kubernetesToken: true, kubernetesCACert: true } },
      ['Service-account token', 'API server CA'],
    ],
  ])('a configured %s shows as configured and is never echoed', (_name, overrides, labels) => {
    // Plant the value of every configured key (a typed, unsaved secret is the user's own input and may show).
    const configured = Object.keys(overrides.secureJsonFields ?? {}) as Array<keyof typeof PLANTED>;
    const planted = Object.fromEntries(configured.map((k) => [k, PLANTED[k]]));
    const { container } = setup({ ...overrides, secureJsonData: planted });
    for (const label of labels) {
      const field = screen.getByLabelText(label);
      expect(field).toHaveValue('configured');
      expect(field).toBeDisabled();
    }
    expect(configured.length).toBeGreaterThan(0);
    for (const key of configured) {
      expect(container.innerHTML).not.toContain(PLANTED[key]);
    }
  });

  it('a configured custom header shows its name, not its value', () => {
    const { container } = setup({
      jsonData: { httpHeaderName1: 'X-Scope-OrgID' },
      secureJsonFields: { httpHeaderValue1: true },
      secureJsonData: PLANTED,
    });
    expect(screen.getByDisplayValue('X-Scope-OrgID')).toBeInTheDocument();
    expect(container.innerHTML).not.toContain('PLANTED-tenant');
  });

  it.each<[string, Partial<Settings>, keyof DensitySecureJsonData]>([
    ['Bearer token', { secureJsonFields: { bearerToken: true } }, 'bearerToken'],
    [
      'Service-account token',
      { jsonData: { kubernetesAccess: 'token' }, secureJsonFields: { kubernetesToken: true } },
      'kubernetesToken',
    ],
    [
      'Pasted kubeconfig',
      { jsonData: { kubernetesAccess: 'kubeconfig' }, secureJsonFields: { kubeconfig: true } },
      'kubeconfig',
    ],
  ])('Reset next to %s clears the stored secret', async (label, overrides, key) => {
    const { last } = setup(overrides);
    expect(screen.getByLabelText(label)).toHaveValue('configured');
    // The only configured secret on the page, so the only Reset button.
    await userEvent.click(screen.getByText('Reset'));
    expect(last().secureJsonFields[key]).toBe(false);
    expect(last().secureJsonData?.[key]).toBe('');
  });

  it('a new secret goes to secureJsonData only', () => {
    const { last } = setup({ jsonData: { kubernetesAccess: 'token' } });
    fireEvent.change(screen.getByLabelText('Service-account token'), { target: { value: 'tok-abc' } });
    expect(last().secureJsonData).toEqual({ kubernetesToken: 'tok-abc' });
    expect(JSON.stringify(last().jsonData)).not.toContain('tok-abc');
  });
});

describe('ConfigEditor Prometheus authentication', () => {
  async function openMethods() {
    await userEvent.click(screen.getByLabelText('Authentication method'));
    return within(await screen.findByLabelText('Select options menu'));
  }
  async function chooseAuth(label: string) {
    const menu = await openMethods();
    await userEvent.click(menu.getByText(label));
  }

  it('offers no auth, basic auth and bearer token, each with a description', async () => {
    setup();
    const menu = await openMethods();
    for (const label of ['No Authentication', 'Basic authentication', 'Bearer token']) {
      expect(menu.getByText(label)).toBeInTheDocument();
    }
    expect(menu.getByText('Send a static token in the Authorization header')).toBeInTheDocument();
    expect(menu.queryByText('Forward OAuth Identity')).not.toBeInTheDocument();
  });

  it('basic auth sets basicAuth and the user', async () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings()} spy={spy} />);
    await chooseAuth('Basic authentication');
    fireEvent.change(screen.getByLabelText(/^User \*?$/), { target: { value: 'grafana' } });
    fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'pw' } });
    const final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.basicAuth).toBe(true);
    expect(final.basicAuthUser).toBe('grafana');
    expect(final.secureJsonData).toEqual({ basicAuthPassword: 'pw' });
  });

  it('bearer token method stores the token; switching away clears it', async () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings()} spy={spy} />);
    await chooseAuth('Bearer token');
    fireEvent.change(screen.getByLabelText('Bearer token'), { target: { value: 'tok' } });
    let final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.basicAuth).toBe(false);
    expect(final.secureJsonData).toEqual({ bearerToken: 'tok' });
    await chooseAuth('No Authentication');
    final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.secureJsonData).toEqual({ bearerToken: '' });
    expect(final.secureJsonFields.bearerToken).toBe(false);
    expect(screen.queryByLabelText('Bearer token')).not.toBeInTheDocument();
  });

  it('adds a custom header as httpHeaderName1/httpHeaderValue1', async () => {
    const spy = jest.fn<void, [Settings]>();
    render(<Stateful initial={settings()} spy={spy} />);
    await expand('HTTP headers');
    await userEvent.click(screen.getByText(/add header/i));
    fireEvent.change(screen.getByPlaceholderText('X-Custom-Header'), { target: { value: 'X-Scope-OrgID' } });
    fireEvent.change(screen.getByPlaceholderText('Header value'), { target: { value: 'tenant-a' } });
    // plugin-ui commits headers on blur.
    fireEvent.blur(screen.getByPlaceholderText('Header value'));
    const final = spy.mock.calls[spy.mock.calls.length - 1][0];
    expect(final.jsonData).toEqual({ httpHeaderName1: 'X-Scope-OrgID' });
    expect(final.secureJsonData).toEqual({ httpHeaderValue1: 'tenant-a' });
  });

  it('skip TLS verification sets tlsSkipVerify', async () => {
    const { last } = setup();
    await userEvent.click(screen.getByText('Skip TLS certificate validation'));
    expect(last().jsonData).toEqual({ tlsSkipVerify: true });
  });
});
