import { fireEvent, screen } from '@testing-library/react';

import { setup } from '../../testing/configEditor';

describe('PrometheusSection', () => {
  it('sets the Prometheus URL on the datasource itself', () => {
    const { last } = setup();
    fireEvent.change(screen.getByLabelText('Prometheus URL', { exact: false }), {
      target: { value: 'http://prom:9090' },
    });
    expect(last().url).toBe('http://prom:9090');
    expect(last().jsonData).toEqual({});
  });

  it('sets the Explore datasource uid, and clearing it removes the key', () => {
    const { last } = setup({ jsonData: { workerPool: 'p' } });
    expect(screen.getByLabelText('Explore datasource UID')).toHaveAttribute('placeholder', 'none');
    fireEvent.change(screen.getByLabelText('Explore datasource UID'), { target: { value: 'prometheus' } });
    expect(last().jsonData).toEqual({ workerPool: 'p', exploreDatasourceUid: 'prometheus' });
  });

  it('shows a stored Explore datasource uid', () => {
    const { last } = setup({ jsonData: { exploreDatasourceUid: 'prom-uid' } });
    expect(screen.getByLabelText('Explore datasource UID')).toHaveValue('prom-uid');
    fireEvent.change(screen.getByLabelText('Explore datasource UID'), { target: { value: ' ' } });
    expect(last().jsonData).toEqual({});
  });
});
