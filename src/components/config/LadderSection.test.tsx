import { fireEvent, screen } from '@testing-library/react';

import { expand, setup } from '../../testing/configEditor';

describe('LadderSection', () => {
  const PROFILE = '- key: resume_rps\n  query: locust_requests_total{status="success"}\n  reduce: growth_rate\n';

  it('is closed until a profile is set, then writes it as typed', async () => {
    const { last } = setup({ jsonData: { workerPool: 'p' } });
    expect(screen.queryByLabelText('Ladder profile (YAML)')).not.toBeInTheDocument();
    await expand('Ladder');
    fireEvent.change(screen.getByLabelText('Ladder profile (YAML)'), { target: { value: PROFILE } });
    expect(last().jsonData).toEqual({ workerPool: 'p', ladderProfile: PROFILE });
  });

  it('opens with the stored profile, and clearing it removes the key', () => {
    const { last } = setup({ jsonData: { ladderProfile: PROFILE } });
    expect(screen.getByLabelText('Ladder profile (YAML)')).toHaveValue(PROFILE);
    fireEvent.change(screen.getByLabelText('Ladder profile (YAML)'), { target: { value: '' } });
    expect(last().jsonData).toEqual({});
  });
});
