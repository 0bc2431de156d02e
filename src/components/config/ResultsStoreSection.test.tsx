import { fireEvent, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

import { expand, setup } from '../../testing/configEditor';
import { DensityOptions } from '../../types';

describe('ResultsStoreSection', () => {
  it.each<[string, string, Partial<DensityOptions>]>([
    ['Results store URL', 'gs://bench/results', { resultsStore: 'gs://bench/results' }],
    ['User-count query', 'sum(locust_users{job="l"})', { userCountQuery: 'sum(locust_users{job="l"})' }],
    ['Run gap (s)', '300', { runGapSeconds: 300 }],
  ])('%s = %s', async (label, value, want) => {
    const { last } = setup({ jsonData: { ateletContainer: 'keep-me' } });
    await expand('Selectors');
    await expand('Advanced');
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    expect(last().jsonData).toEqual({ ateletContainer: 'keep-me', ...want });
  });

  it.each<[string, Partial<DensityOptions>]>([['User-count query', { userCountQuery: 'x' }]])(
    'clearing %s removes the key so the default applies',
    (label, jsonData) => {
      const { last } = setup({ jsonData: { ...jsonData, workerPool: 'p', ateletLagSeconds: 1 } });
      fireEvent.change(screen.getByLabelText(label), { target: { value: '' } });
      const key = Object.keys(jsonData)[0];
      expect(last().jsonData).not.toHaveProperty(key);
      expect(last().jsonData.workerPool).toBe('p');
    }
  );

  it('turns run discovery off', async () => {
    const { last } = setup();
    await userEvent.click(screen.getByLabelText('Discover runs'));
    expect(last().jsonData).toEqual({ discoverRuns: false });
  });

  it('prefers stored artifacts by default and can force the harvest', async () => {
    const { last } = setup();
    expect(screen.getByLabelText('Prefer stored')).toBeChecked();
    await userEvent.click(screen.getByLabelText('Prefer stored'));
    expect(last().jsonData).toEqual({ preferStored: false });
  });
});
