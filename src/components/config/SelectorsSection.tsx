import React from 'react';
import { ConfigSection } from '@grafana/plugin-ui';

import { DEFAULTS, DensityOptions } from '../../types';
import { configFields, hasAny, SectionProps } from './fields';

/** The names the harvest PromQL and Kubernetes reads select on. */
export function SelectorsSection(props: SectionProps) {
  const { jsonData } = props.options;
  const { textField } = configFields(props);
  return (
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
