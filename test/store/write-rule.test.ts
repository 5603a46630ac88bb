/**
 * The rule after a failed write, the same on every backend through the one
 * door for writes (openWriter): a write handed over while an earlier one was
 * outstanding fails without writing if that one fails; a write handed over
 * once the failure was reported is written as usual.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BlockOrderError, EarlierWriteFailedError, InternalError } from '../../src/errors.js';
import { openStore, openWriter } from '../../src/store/open.js';
import { writeBlocks } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { block, order } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-write-rule-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

for (const backend of BACKENDS) {
  test(`${backend.name}: a failed write fails the writes handed over behind it; a write made once it was reported is written`, async () => {
    const fresh = await backend.fresh(dir, `rule-${stores.length}`);
    stores.push(fresh);
    const writer = await openWriter(fresh.config);
    try {
      await writeBlocks(writer, [block(1, { orders: [order(1)] }), block(2, { orders: [order(2)] })]);
      // Handed over together: the first is refused (block 2 is stored), the others would follow it.
      const refused = writeBlocks(writer, [block(2, { orders: [order(3)] })]);
      const behind = writeBlocks(writer, [block(3, { orders: [order(4)] })]);
      const further = writeBlocks(writer, [block(4, { orders: [order(5)] })]);
      await assert.rejects(refused, (e) => e instanceof BlockOrderError && /block 2 is not newer than the last stored block 2/.test(e.message));
      await assert.rejects(behind, (e) => e instanceof EarlierWriteFailedError && /an earlier group failed: block 2 is not newer/.test(e.message));
      await assert.rejects(further, (e) => e instanceof EarlierWriteFailedError && /an earlier group failed: block 2 is not newer/.test(e.message));
      assert.equal((await writer.lastBlock())?.height, 2n, 'nothing behind the failure was written');

      // The failure reported, the writer takes the next write.
      await writeBlocks(writer, [block(3, { orders: [order(6)] })]);
      assert.equal((await writer.lastBlock())?.height, 3n);

      // A group that cannot be packed takes its turn too, and fails the write behind it.
      const group = writer.newGroup();
      group.add(block(4, { orders: [order(7)] }));
      await writer.write(group);
      const again = writer.write(group);
      const afterAgain = writeBlocks(writer, [block(5, { orders: [order(8)] })]);
      await assert.rejects(again, (e) => e instanceof InternalError && /already handed over/.test(e.message));
      await assert.rejects(afterAgain, EarlierWriteFailedError);
      assert.equal((await writer.lastBlock())?.height, 4n);
    } finally {
      await writer.close();
    }
    const store = await openStore(fresh.config, { readOnly: true });
    try {
      const ids = (await store.listOrders({}, { newestFirst: false, mode: 'first', limit: 10 })).rows.map((r) => r.key.id);
      assert.deepEqual(ids, [order(1).id, order(2).id, order(6).id, order(7).id]);
    } finally {
      await store.close();
    }
  });
}
