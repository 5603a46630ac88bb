/**
 * What clients can make the embedded store hold: distinct filters make
 * distinct statements, whose compiled form lives in native memory that V8
 * does not see. Those kept are bounded by their estimated bytes, and the
 * connection is renewed once it has prepared twice that, which frees the
 * ones dropped: the process stays within a bound however many distinct
 * filters come (it grew by 400 MB over 3,000 of them before).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { writeBlocks } from '../../../src/store/store.js';
import { openSqliteStore } from '../../../src/store/sqlite/store.js';
import { block, hex, order, tempStore } from '../helpers.js';

function rssAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().rss;
}

test('statements of 2,000 distinct filters: the process grows by a bounded amount, and pages stay right', async (t) => {
  const { writer, path } = await tempStore(t);
  await writeBlocks(writer, [block(1, { orders: Array.from({ length: 200 }, (_, i) => order(i + 1)) })]);
  const store = openSqliteStore({ path, readOnly: true });
  t.after(() => store.close());
  const markets = Array.from({ length: 64 }, (_, k) => hex(1000 + k));
  const page = { newestFirst: true, mode: 'first', limit: 5 } as const;
  const expected = store.listOrdersSync({ marketIds: markets.slice(0, 3) }, page).rows.map((r) => r.json);
  assert.equal(expected.length, 5);
  const before = rssAfterGc();
  for (let i = 0; i < 2000; i++) {
    // 64 market arms, each with an IN list of parties whose length makes the statement a new one.
    const parties = Array.from({ length: 1 + (i % 1000) }, (_, k) => hex(2000 + (k % 5) + 5 * Math.floor(k / 5)));
    store.listOrdersSync({ marketIds: markets, partyIds: parties }, page);
  }
  const grown = rssAfterGc() - before;
  assert.ok(grown < 200 << 20, `the process grew by ${(grown / 2 ** 20).toFixed(0)} MB`);
  const size = store.statementCacheSize;
  assert.ok(size.bytes <= 16 << 20, `${size.bytes} estimated bytes kept`);
  assert.ok(size.renewals > 0, 'the connection was renewed');
  assert.deepEqual(store.listOrdersSync({ marketIds: markets.slice(0, 3) }, page).rows.map((r) => r.json), expected, 'the same page after');
});

test('64 parties and 1,000 markets: a page, not a statement SQLite refuses for its parameters', async (t) => {
  const { writer, path } = await tempStore(t);
  // Enough orders that 64 party branches cost less than walking the time index.
  const orders = Array.from({ length: 5000 }, (_, i) => order(i + 1));
  await writeBlocks(writer, [block(1, { orders })]);
  const store = openSqliteStore({ path, readOnly: true });
  t.after(() => store.close());
  const parties = [...new Set(orders.map((o) => o.partyId))];
  const markets = [orders[0]!.marketId, ...Array.from({ length: 999 }, (_, k) => hex(50_000 + k))];
  const page = store.listOrdersSync({ partyIds: [...parties, ...Array.from({ length: 64 - parties.length }, (_, k) => hex(60_000 + k))], marketIds: markets },
    { newestFirst: true, mode: 'first', limit: 5000 });
  const expected = orders.filter((o) => o.marketId === orders[0]!.marketId).length;
  assert.equal(page.rows.length, expected);
});
