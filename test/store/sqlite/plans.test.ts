/**
 * EXPLAIN QUERY PLAN of every filter shape, both orderings, both modes, with
 * and without a cursor: always an index range scan (or an ordered walk of an
 * index), never a table scan and never a sort; IN lists on the driving index
 * are merged branches; the planner picks the index the data calls for.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TYPE } from '../../../src/domain/enums.js';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/store.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { tempDatabase } from '../helpers.js';
import { BUNDLE_CURSOR, BUNDLE_SHAPES, cursorKey, ORDER_SHAPES, requests, skewedBook } from '../plan-shapes.js';

let store: SqliteStore;

before(async () => {
  const { path } = tempDatabase({ after });
  const writer = await SqliteWriter.open(path);
  for (const b of skewedBook(40)) await writeBlocks(writer, [b]);
  await writer.close();
  store = openSqliteStore({ path, readOnly: true });
});
after(() => store?.close());

/**
 * Every table access goes through an index; no rows are sorted. The one sort
 * allowed is of the few signatures packed into one bundle node.
 */
function assertIndexedOnly(plan: string[], what: string): void {
  for (const line of plan) {
    if (line === 'USE TEMP B-TREE FOR string_agg(ORDER BY)') continue;
    assert.doesNotMatch(line, /TEMP B-TREE/, `${what}: sorts: ${plan.join(' | ')}`);
    if (/^(SCAN|SEARCH) [ob]\b/.test(line)) assert.match(line, /USING (COVERING )?INDEX /, `${what}: table scan: ${line}`);
    assert.doesNotMatch(line, /^SCAN (orders_current|signer_added)\b/, what);
  }
}

for (const [name, filter, index, merged] of ORDER_SHAPES) {
  test(`orders plan, ${name}: ${index}${merged ? ', merged branches' : ''}, indexed both ways`, () => {
    for (const req of requests(cursorKey)) {
      const what = `${name} ${JSON.stringify({ ...req, cursor: req.cursor && 'yes' })}`;
      const [page, beyond] = store.explainOrders(filter, req);
      assert.ok(page !== undefined && page.length > 0, `${what}: a plan`);
      assertIndexedOnly(page, `${what} page`);
      assert.ok(page.some((l) => l.includes(`INDEX ${index}`)), `${what}: expected ${index}: ${page.join(' | ')}`);
      assert.equal(page.some((l) => l.includes('MERGE (UNION ALL)')), merged, `${what}: ${page.join(' | ')}`);
      assert.equal(beyond !== undefined, req.cursor !== undefined, `${what}: existence check only with a cursor`);
      if (beyond) {
        assertIndexedOnly(beyond, `${what} beyond`);
        assert.ok(beyond.some((l) => l.includes(`INDEX ${index}`)), `${what}: beyond uses ${index}`);
      }
      if (req.cursor) assert.ok(page.some((l) => l.startsWith('SEARCH') && l.includes('(created_at,id_key)')), `${what}: seeks to the cursor`);
    }
  });
}

test('orders plan: a filter nothing can match runs no query at all', () => {
  assert.deepEqual(store.explainOrders({ statuses: [] }, { newestFirst: true, mode: 'first', limit: 10 }), []);
  assert.deepEqual(store.explainOrders({ liveOnly: true, types: [TYPE.MARKET] }, { newestFirst: true, mode: 'first', limit: 10 }), []);
});

for (const [name, filter, index] of BUNDLE_SHAPES) {
  test(`bundles plan, ${name}: ${index}, indexed both ways`, () => {
    for (const req of requests(BUNDLE_CURSOR)) {
      const plans = store.explainBundles(filter, req);
      assert.equal(plans.length, req.cursor ? 2 : 1);
      for (const plan of plans) {
        assertIndexedOnly(plan, name);
        assert.ok(plan.some((l) => l.includes(`INDEX ${index}`)), `${name}: ${plan.join(' | ')}`);
      }
    }
  });
}
