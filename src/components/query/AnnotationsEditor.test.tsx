import { setTemplateSrv } from '@grafana/runtime';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('AnnotationsEditor', () => {
  it('annotations shows ["Run","Test name","Tag"]', async () => {
    await expectFields('annotations', ['Run', 'Test name', 'Tag'], ['Scope', 'Block']);
  });
});
