import { fireEvent, screen } from '@testing-library/react';

import { expand, setup } from '../../testing/configEditor';
import { DensityOptions } from '../../types';

describe('AdvancedSection', () => {
  it.each<[string, string, Partial<DensityOptions>]>([
    ['Atelet lag (s)', '90', { ateletLagSeconds: 90 }],
    ['Request timeout (s)', '12', { timeoutSeconds: 12 }],
    ['Max queries in flight', '4', { maxConcurrentQueries: 4 }],
    ['Cache entries', '1024', { cacheEntries: 1024 }],
    ['Max series', '20', { maxSeries: 20 }],
    ['Top series', '5', { topSeries: 5 }],
    ['Max range (days)', '7', { maxRangeDays: 7 }],
    ['Max runs per query', '100', { maxRunsPerQuery: 100 }],
    ['Max response (MiB)', '32', { maxResponseBytes: 33554432 }],
    ['Atelet lag (s)', '2.6', { ateletLagSeconds: 3 }],
  ])('%s = %s', async (label, value, want) => {
    const { last } = setup({ jsonData: { ateletContainer: 'keep-me' } });
    await expand('Selectors');
    await expand('Advanced');
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    expect(last().jsonData).toEqual({ ateletContainer: 'keep-me', ...want });
  });

  it.each<[string, Partial<DensityOptions>]>([
    ['Atelet lag (s)', { ateletLagSeconds: 90 }],
    ['Max response (MiB)', { maxResponseBytes: 1024 }],
  ])('clearing %s removes the key so the default applies', (label, jsonData) => {
    const { last } = setup({ jsonData: { ...jsonData, workerPool: 'p', ateletLagSeconds: 1 } });
    fireEvent.change(screen.getByLabelText(label), { target: { value: '' } });
    const key = Object.keys(jsonData)[0];
    expect(last().jsonData).not.toHaveProperty(key);
    expect(last().jsonData.workerPool).toBe('p');
  });
});
