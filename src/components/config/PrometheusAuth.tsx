import React, { useState } from 'react';
import { css } from '@emotion/css';
import { DataSourceSettings } from '@grafana/data';
import { Auth, AuthMethod, convertLegacyAuthProps } from '@grafana/plugin-ui';
import { InlineField } from '@grafana/ui';

import { DensityOptions, DensitySecureJsonData } from '../../types';
import { configFields, LABEL_WIDTH, SectionProps } from './fields';

type Settings = DataSourceSettings<DensityOptions, DensitySecureJsonData>;

/** The bearer-token method added to plugin-ui's auth picker (value: secureJsonData.bearerToken). */
const BEARER_METHOD = 'custom-bearer' as const;

/**
 * Prometheus authentication through plugin-ui's Auth (basic auth, TLS,
 * custom headers as httpHeaderNameN/httpHeaderValueN) plus a bearer-token
 * method. Choosing another method clears a stored bearer token, so exactly
 * one credential is in play.
 */
export function PrometheusAuth(props: SectionProps) {
  const { options, onOptionsChange } = props;
  const { secretInput } = configFields(props);
  const secureFields = options.secureJsonFields ?? {};
  const secureData = options.secureJsonData ?? {};
  const bearerSet = Boolean(secureFields.bearerToken) || Boolean(secureData.bearerToken);
  const [bearerChosen, setBearerChosen] = useState(bearerSet);

  const legacy = convertLegacyAuthProps<Settings>({ config: options, onChange: onOptionsChange });
  const selectedMethod = options.basicAuth
    ? AuthMethod.BasicAuth
    : bearerSet || bearerChosen
      ? BEARER_METHOD
      : AuthMethod.NoAuth;

  const onAuthMethodSelect = (method: string) => {
    setBearerChosen(method === BEARER_METHOD);
    let next: Settings = { ...options, basicAuth: method === AuthMethod.BasicAuth };
    if (method !== BEARER_METHOD && bearerSet) {
      next = {
        ...next,
        secureJsonData: { ...secureData, bearerToken: '' },
        secureJsonFields: { ...secureFields, bearerToken: false },
      };
    }
    onOptionsChange(next);
  };

  const bearer = (
    <InlineField
      label="Bearer token"
      labelWidth={LABEL_WIDTH - 8}
      htmlFor="density-bearerToken"
      tooltip="Sent as Authorization: Bearer <token>."
    >
      {secretInput('bearerToken', 'density-bearerToken', 'Token', 36)}
    </InlineField>
  );

  return (
    <div className={authStyles}>
      <Auth
        {...legacy}
        selectedMethod={selectedMethod}
        onAuthMethodSelect={onAuthMethodSelect}
        visibleMethods={[AuthMethod.NoAuth, AuthMethod.BasicAuth, BEARER_METHOD]}
        customMethods={[
          {
            id: BEARER_METHOD,
            label: 'Bearer token',
            description: 'Send a static token in the Authorization header',
            component: bearer,
          },
        ]}
      />
    </div>
  );
}

/**
 * plugin-ui's custom header gives its value input min-width: 100%, so the
 * Reset button of a configured value is pushed out of its field and drawn
 * over the remove-header button. Letting that input shrink keeps Reset in
 * the field. (Found in Chromium by internal/gallerytest; jsdom has no layout.)
 */
const authStyles = css({
  'div:has(> div > input[id^="custom-header-"][id$="-value-input"])': { minWidth: 0, flexGrow: 1 },
});
