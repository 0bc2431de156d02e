import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { settings } from '../../testing/fixtures';
import { Settings, setup, Stateful } from '../../testing/configEditor';
import { DensityOptions } from '../../types';

describe('KubernetesSection', () => {
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
