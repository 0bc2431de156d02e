import { fireEvent, screen } from '@testing-library/react';

import { expand, setup } from '../../testing/configEditor';

describe('VerdictsSection', () => {
  const GATES = 'gates:\n  - key: cluster_packing_p50\n    min: 0.8\n';
  const ACKS = '- key: restore_p99_s\n  run: nightly/1710237601/c12\n  reason: expected\n';

  it('is closed when neither gates nor acks is set', () => {
    setup();
    expect(screen.queryByLabelText('Gates (YAML)')).not.toBeInTheDocument();
    expect(screen.queryByLabelText('Acknowledgements (YAML)')).not.toBeInTheDocument();
  });

  it('opens with the stored YAML as typed', () => {
    setup({ jsonData: { gates: GATES, acks: ACKS } });
    expect(screen.getByLabelText('Gates (YAML)')).toHaveValue(GATES);
    expect(screen.getByLabelText('Acknowledgements (YAML)')).toHaveValue(ACKS);
  });

  it.each<[string, 'gates' | 'acks', string]>([
    ['Gates (YAML)', 'gates', GATES],
    ['Acknowledgements (YAML)', 'acks', ACKS],
  ])('%s writes %s with its whitespace kept', async (label, key, value) => {
    const { last } = setup({ jsonData: { workerPool: 'p' } });
    await expand('Verdicts');
    expect(screen.getByLabelText(label).getAttribute('placeholder')).toContain('restore_p99_s');
    fireEvent.change(screen.getByLabelText(label), { target: { value } });
    expect(last().jsonData).toEqual({ workerPool: 'p', [key]: value });
  });

  it('clearing the acks removes the key', () => {
    const { last } = setup({ jsonData: { acks: ACKS, gates: GATES } });
    fireEvent.change(screen.getByLabelText('Acknowledgements (YAML)'), { target: { value: '  \n' } });
    expect(last().jsonData).toEqual({ gates: GATES });
  });
});
