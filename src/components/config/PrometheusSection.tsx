import React, { ChangeEvent } from 'react';
import { ConfigSection } from '@grafana/plugin-ui';
import { InlineField, Input } from '@grafana/ui';

import { configFields, INPUT_WIDTH, LABEL_WIDTH, SectionProps } from './fields';

/** The Prometheus URL (the datasource url) and the datasource Explore links go to. */
export function PrometheusSection(props: SectionProps) {
  const { options, onOptionsChange } = props;
  const { textField } = configFields(props);
  return (
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
      {textField(
        'exploreDatasourceUid',
        'Explore datasource UID',
        'The uid of a Prometheus datasource in this Grafana: the runs table and run annotations then link to Explore over the run window. Empty: no Explore links.',
        'none'
      )}
    </ConfigSection>
  );
}
