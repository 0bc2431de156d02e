import { setTemplateSrv } from '@grafana/runtime';
import { screen } from '@testing-library/react';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields, setup } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('FreshnessEditor', () => {
  it('freshness shows no run, no filter, and says it ignores the range', async () => {
    await expectFields('freshness', [], ['Run', 'Test name', 'Tag', 'Keys', 'Baseline', 'Align']);
    expect(screen.getByTestId('density-query-freshness-note')).toHaveTextContent('Ignores the dashboard time range');
  });

  it('freshness is described in the picker', async () => {
    await setup({ queryType: 'freshness' });
    expect(screen.getByLabelText('Query type')).toHaveValue('Freshness');
    expect(screen.getByTestId('density-query-type-description')).toHaveTextContent('hours since the newest stored run');
  });
});
