import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { expand, Settings, setup } from '../testing/configEditor';
import { DensitySecureJsonData } from '../types';

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
