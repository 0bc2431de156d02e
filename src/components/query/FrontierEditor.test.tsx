import { setTemplateSrv } from '@grafana/runtime';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('FrontierEditor', () => {
  it('frontier shows ["Run","Test name","Tag"]', async () => {
    await expectFields('frontier', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']);
  });
});
