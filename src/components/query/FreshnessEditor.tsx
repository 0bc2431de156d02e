import React from 'react';
import { Text } from '@grafana/ui';

/** freshness: every test name and cohort of the results store; nothing to choose. */
export function FreshnessEditor() {
  return (
    <Text color="secondary" variant="bodySmall" data-testid="density-query-freshness-note">
      Ignores the dashboard time range: per test name and cohort, hours_since_last_run (since the newest stored run
      ended) and runs_last_7d. Alert on it to catch a nightly that stopped running.
    </Text>
  );
}
