import React from 'react';
import { ConfigSection } from '@grafana/plugin-ui';

import { configFields, hasAny, SectionProps } from './fields';

/** The ladder profile (YAML) for ladders evaluated from logs.txt. */
export function LadderSection(props: SectionProps) {
  const { jsonData } = props.options;
  const { yamlField } = configFields(props);
  return (
    <ConfigSection
      title="Ladder"
      description="The figures of each load step when a stored ladder run without ladder rows is evaluated from its logs.txt (stored rows are shown as exported)."
      isCollapsible
      isInitiallyOpen={hasAny(jsonData, ['ladderProfile'])}
    >
      {yamlField(
        'ladderProfile',
        'Ladder profile (YAML)',
        'A list of {key, query, reduce} replacing the built-in profile (print it with density ladder --print-profile); reduce is growth, growth_rate, mean, max, min or quantile:<q>. Checked by each ladder query.',
        LADDER_PLACEHOLDER
      )}
    </ConfigSection>
  );
}

const LADDER_PLACEHOLDER =
  '- key: resume_rps\n  query: locust_requests_total{name="${resume_name}", status="success"}\n  reduce: growth_rate';
