import React from 'react';
import { ConfigSection } from '@grafana/plugin-ui';
import { InlineField, RadioButtonGroup, Text } from '@grafana/ui';

import { DEFAULTS, KubernetesAccess } from '../../types';
import { configFields, LABEL_WIDTH, SectionProps } from './fields';

/** Kubernetes access: off, in-cluster, a kubeconfig or a token, with the fields of the chosen mode. */
export function KubernetesSection(props: SectionProps) {
  const { options } = props;
  const { jsonData } = options;
  const { setJson, textField, numberField, secretField } = configFields(props);
  const access: KubernetesAccess = jsonData.kubernetesAccess ?? DEFAULTS.kubernetesAccess;
  return (
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
          {secretField(
            'kubeconfig',
            'Pasted kubeconfig',
            'Used when no path is set; stored encrypted. Inline data only: exec plugins, auth providers and file references are refused.',
            'apiVersion: v1\nkind: Config\n…',
            true
          )}
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
          {secretField(
            'kubernetesToken',
            'Service-account token',
            'Bearer token of a service account with list on nodes, pods and events.',
            'Service-account token'
          )}
          {secretField(
            'kubernetesCACert',
            'API server CA',
            "PEM of the API server's CA; empty uses the system roots.",
            '-----BEGIN CERTIFICATE-----',
            true
          )}
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
  );
}

const KUBERNETES_ACCESS_OPTIONS: Array<{ value: KubernetesAccess; label: string; description: string }> = [
  { value: 'off', label: 'Off', description: 'No Kubernetes calls; cluster facts of live runs are null' },
  { value: 'inCluster', label: 'In-cluster', description: "The Grafana pod's service account" },
  { value: 'kubeconfig', label: 'Kubeconfig', description: 'A kubeconfig file on the Grafana server, or pasted' },
  { value: 'token', label: 'Token', description: 'API server URL and a bearer token' },
];
