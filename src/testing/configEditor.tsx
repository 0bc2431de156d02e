// Helpers of the config editor tests (src/components/ConfigEditor.test.tsx and
// src/components/config/*.test.tsx); not bundled.
import React, { useState } from 'react';
import { DataSourceSettings } from '@grafana/data';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { ConfigEditor } from '../components/ConfigEditor';
import { DensityOptions, DensitySecureJsonData } from '../types';
import { settings } from './fixtures';

export type Settings = DataSourceSettings<DensityOptions, DensitySecureJsonData>;

/** Renders the whole config editor (sections are tested as the page composes them). */
export function setup(overrides: Partial<Settings> = {}) {
  const onOptionsChange = jest.fn<void, [Settings]>();
  const options = settings(overrides);
  const utils = render(<ConfigEditor options={options} onOptionsChange={onOptionsChange} />);
  const last = (): Settings => onOptionsChange.mock.calls[onOptionsChange.mock.calls.length - 1][0];
  return { ...utils, onOptionsChange, options, last };
}

/** Keeps the options in state, as Grafana's settings page does, for multi-step interactions. */
export function Stateful({ initial, spy }: { initial: Settings; spy: (s: Settings) => void }) {
  const [options, setOptions] = useState(initial);
  return (
    <ConfigEditor
      options={options}
      onOptionsChange={(o) => {
        spy(o);
        setOptions(o);
      }}
    />
  );
}

/** Opens a collapsible section if it is closed (label queries: role queries are slow on a page this size). */
export async function expand(section: string) {
  const button = screen.queryByLabelText(`Expand section ${section}`);
  if (button) {
    await userEvent.click(button);
  }
}
