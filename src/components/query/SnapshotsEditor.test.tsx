import { setTemplateSrv } from '@grafana/runtime';

import { FakeTemplateSrv, giveElementsASize } from '../../testing/fixtures';
import { expectFields } from '../../testing/queryEditor';

beforeAll(giveElementsASize);

beforeEach(() => {
  setTemplateSrv(new FakeTemplateSrv({ run: 'prom-1700000000', test: 'sweep-1k' }));
});

describe('SnapshotsEditor', () => {
  it('snapshots shows ["Run"]', async () => {
    await expectFields('snapshots', ['Run'], ['Scope', 'Block', 'Test name', 'Align']);
  });
});
