import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { Divider, Stack } from '@grafana/ui';

import { DensityOptions, DensitySecureJsonData } from '../types';
import { AdvancedSection } from './config/AdvancedSection';
import { KubernetesSection } from './config/KubernetesSection';
import { LadderSection } from './config/LadderSection';
import { PrometheusAuth } from './config/PrometheusAuth';
import { PrometheusSection } from './config/PrometheusSection';
import { ResultsStoreSection } from './config/ResultsStoreSection';
import { SelectorsSection } from './config/SelectorsSection';
import { VerdictsSection } from './config/VerdictsSection';

type Props = DataSourcePluginOptionsEditorProps<DensityOptions, DensitySecureJsonData>;

/**
 * Settings of one Density datasource, one section per file under
 * src/components/config/. Defaults are shown as placeholders and never
 * written: an untouched field stays out of jsonData so the backend's
 * defaults (the same values, see DEFAULTS) apply and can change with it.
 * Secrets are write-only: a configured one shows as "configured" with Reset.
 */
export function ConfigEditor(props: Props) {
  return (
    <Stack direction="column" gap={2}>
      <PrometheusSection {...props} />
      <PrometheusAuth {...props} />
      <Divider />
      <ResultsStoreSection {...props} />
      <Divider />
      <VerdictsSection {...props} />
      <Divider />
      <LadderSection {...props} />
      <Divider />
      <KubernetesSection {...props} />
      <Divider />
      <SelectorsSection {...props} />
      <Divider />
      <AdvancedSection {...props} />
    </Stack>
  );
}
