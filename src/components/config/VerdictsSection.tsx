import React from 'react';
import { ConfigSection } from '@grafana/plugin-ui';

import { configFields, hasAny, SectionProps } from './fields';
import { DensityOptions } from '../../types';

/** Gates and change-point acknowledgements (YAML) for the gates and changePoints queries. */
export function VerdictsSection(props: SectionProps) {
  const { jsonData } = props.options;
  const { yamlField } = configFields(props);
  return (
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
  );
}

const VERDICT_KEYS: Array<keyof DensityOptions> = ['gates', 'acks'];
const GATES_PLACEHOLDER =
  'gates:\n  - key: cluster_packing_p50\n    min: 0.8\n  - key: restore_p99_s\n    max_regression_pct: 10';
const ACKS_PLACEHOLDER = '- key: restore_p99_s\n  run: nightly/1710237601/c0ffee1\n  reason: slower restores expected';
