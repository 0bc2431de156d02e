import React from 'react';
import { ConfigSection } from '@grafana/plugin-ui';
import { InlineField, Input } from '@grafana/ui';

import { BYTES_PER_MIB, DEFAULTS, DensityOptions } from '../../types';
import { configFields, hasAny, INPUT_WIDTH, LABEL_WIDTH, SectionProps } from './fields';

/** Timing, concurrency, series and caches. */
export function AdvancedSection(props: SectionProps) {
  const { options } = props;
  const { jsonData } = options;
  const { numberField, onMaxResponseMiB } = configFields(props);
  return (
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
  );
}

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
