import { setTemplateSrv } from '@grafana/runtime';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('ActiveActorsEditor', () => {
  it('activeActors shows ["Run","Align"]', async () => {
    await expectFields('activeActors', ['Run', 'Align'], ['Scope', 'Block', 'Test name']);
  });
});
