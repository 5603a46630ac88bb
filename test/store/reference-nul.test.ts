/**
 * A reference filter holding U+0000 (`filter.reference=a%00b`, found by the
 * HTTP fuzzer: test/integration/fuzz-http.test.ts) is a page like any other
 * on every backend: PostgreSQL's text cannot hold the character, so no order
 * it stores has such a reference, and the page is empty rather than the
 * database's refusal of the parameter (an HTTP 500). The embedded store,
 * whose text can hold it, compares it as given.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore, openWriter } from '../../src/store/open.js';
import { writeBlocks } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { block, order } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-reference-nul-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

for (const backend of BACKENDS) {
  test(`${backend.name}: a reference filter holding U+0000 answers a page, in either direction and ordering`, async () => {
    const fresh = await backend.fresh(dir, `nul-${stores.length}`);
    stores.push(fresh);
    const writer = await openWriter(fresh.config);
    try {
      await writeBlocks(writer, [block(1, { orders: [order(1, { reference: 'a' }), order(2, { reference: 'ab' })] })]);
    } finally {
      await writer.close();
    }
    const store = await openStore(fresh.config, { readOnly: true });
    try {
      for (const reference of ['a\0b', '\0', 'a\0']) {
        for (const [mode, newestFirst] of [['first', true], ['last', false]] as const) {
          const page = await store.listOrders({ reference }, { newestFirst, mode, limit: 10 });
          assert.deepEqual(page.rows, [], `reference ${JSON.stringify(reference)}: no order has it`);
          assert.equal(page.hasNextPage || page.hasPreviousPage, false);
          assert.equal(page.lastBlock?.height, 1n, 'the page names the block it was read at');
        }
      }
      // The same filter without the character still finds its order.
      const found = await store.listOrders({ reference: 'ab' }, { newestFirst: true, mode: 'first', limit: 10 });
      assert.deepEqual(found.rows.map((r) => r.key.id), [order(2).id]);
    } finally {
      await store.close();
    }
  });
}
