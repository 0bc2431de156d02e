import { fireEvent, screen } from '@testing-library/react';

import { expand, setup } from '../../testing/configEditor';
import { DensityOptions } from '../../types';

describe('SelectorsSection', () => {
  it.each<[string, string, Partial<DensityOptions>]>([
    ['Worker pool', 'pool-b', { workerPool: 'pool-b' }],
    ['Worker namespace', 'bench', { workerNamespace: 'bench' }],
    ['Worker container', 'w', { workerContainer: 'w' }],
    ['Worker pod regex', 'pool-b-.*', { workerPodRegex: 'pool-b-.*' }],
    ['Atelet namespace', 'ate', { ateletNamespace: 'ate' }],
    ['Atelet container', 'agent', { ateletContainer: 'agent' }],
  ])('%s = %s', async (label, value, want) => {
    const { last } = setup({ jsonData: { ateletContainer: 'keep-me' } });
    await expand('Selectors');
    await expand('Advanced');
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    expect(last().jsonData).toEqual({ ateletContainer: 'keep-me', ...want });
  });
});
