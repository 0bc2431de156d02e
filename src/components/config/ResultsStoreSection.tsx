import React from 'react';
import { ConfigSection, ConfigSubSection } from '@grafana/plugin-ui';

import { DEFAULTS } from '../../types';
import { configFields, SectionProps } from './fields';

/** The results store, whether stored artifacts win, and run discovery from Prometheus. */
export function ResultsStoreSection(props: SectionProps) {
  const { switchField, textField, numberField } = configFields(props);
  return (
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
      {switchField(
        'preferStored',
        'Prefer stored',
        "Read a stored run's numbers from its artifacts (server_summary.json, stats.jsonl, psi_series.json) with no Prometheus request. Off forces the harvest, e.g. to check an artifact."
      )}
      <ConfigSubSection
        title="Run discovery from Prometheus"
        description="A run is an interval in which the user-count series is above 0; runs are split where it stays at 0 or absent for longer than the gap."
      >
        {switchField('discoverRuns', 'Discover runs')}
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
  );
}
