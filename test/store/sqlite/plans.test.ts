/**
 * EXPLAIN QUERY PLAN of every filter shape, both orderings, both modes, with
 * and without a cursor: always an index range scan (or an ordered walk of an
 * index), never a table scan and never a sort; IN lists on the driving index
 * are merged branches; the planner picks the index the data calls for.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { BundleFilter, BundleKey } from '../../../src/domain/bundle.js';
import { STATUS, TIF, TYPE } from '../../../src/domain/enums.js';
import { NETWORK_PARTY, type Order, type OrderFilter, type OrderKey } from '../../../src/domain/order.js';
import type { PageRequest } from '../../../src/domain/page.js';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/store.js';
import { block, hex, order, random, tempDatabase, T0 } from '../helpers.js';
import { writeBlocks } from '../../../src/store/store.js';

let store: SqliteStore;

/**
 * A skewed book, like a real one: most orders filled or cancelled, a few
 * rejected or parked, few network orders, few GFA, 2% live.
 */
before(async () => {
  const { path } = tempDatabase({ after });
  store = openSqliteStore({ path });
  const rnd = random(99);
  let n = 0;
  for (let h = 1; h <= 40; h++) {
    const orders: Order[] = [];
    for (let i = 0; i < 100; i++) {
      n++;
      const r = rnd();
      const status = r < 0.02 ? STATUS.ACTIVE : r < 0.025 ? STATUS.PARKED : r < 0.03 ? STATUS.REJECTED : r < 0.6 ? STATUS.FILLED : STATUS.CANCELLED;
      const network = rnd() < 0.01;
      orders.push(order(n, {
        status,
        type: network ? TYPE.NETWORK : TYPE.LIMIT,
        partyId: network ? NETWORK_PARTY : hex(0xa00 + Math.floor(rnd() * 200)),
        marketId: hex(0xb00 + Math.floor(rnd() * 10)),
        timeInForce: rnd() < 0.01 ? TIF.GFA : TIF.GTC,
        reference: rnd() < 0.3 ? `ref-${n}` : '',
        createdAt: T0 + BigInt(n),
      }));
    }
    await writeBlocks(store, [block(h, {
      orders,
      signersAdded: [{ signatureId: hex(h), validatorId: hex(0xc0 + (h % 4)), timestamp: T0 + BigInt(h), newSigner: 'n', submitter: '0xs', nonce: '1', epochSeq: BigInt(h % 5) }],
    })]);
  }
});
after(() => store?.close());

const cursorKey: OrderKey = { createdAt: T0 + 2000n, id: hex(2000) };

function requests<K>(cursor: K): PageRequest<K>[] {
  const out: PageRequest<K>[] = [];
  for (const newestFirst of [true, false]) {
    for (const mode of ['first', 'last'] as const) {
      out.push({ newestFirst, mode, limit: 50 }, { newestFirst, mode, limit: 50, cursor });
    }
  }
  return out;
}

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

const ORDER_SHAPES: [string, OrderFilter, string, boolean][] = [
  // name, filter, the index that must drive it, whether branches are merged
  ['no filter', {}, 'orders_by_time', false],
  ['rare statuses', { statuses: [STATUS.REJECTED, STATUS.PARKED] }, 'orders_by_status', true],
  ['one rare status', { statuses: [STATUS.PARKED] }, 'orders_by_status', false],
  ['common statuses', { statuses: [STATUS.FILLED, STATUS.CANCELLED] }, 'orders_by_status', true],
  ['every status', { statuses: [STATUS.ACTIVE, STATUS.PARKED, STATUS.REJECTED, STATUS.FILLED, STATUS.CANCELLED] }, 'orders_by_time', false],
  ['rare type', { types: [TYPE.NETWORK] }, 'orders_by_type', false],
  ['rare time in force', { timeInForces: [TIF.GFA, TIF.GFN] }, 'orders_by_time_in_force', true],
  ['excludeLiquidity', { excludeLiquidity: true }, 'orders_by_time', false],
  ['one party', { partyIds: [hex(0xa01)] }, 'orders_by_party', false],
  ['parties', { partyIds: [hex(0xa01), hex(0xa02), NETWORK_PARTY] }, 'orders_by_party', true],
  ['network orders', { partyIds: [NETWORK_PARTY], types: [TYPE.NETWORK] }, 'orders_by_', false],
  ['markets', { marketIds: [hex(0xb01), hex(0xb02)] }, 'orders_by_market', true],
  ['reference', { reference: 'ref-7' }, 'orders_by_reference', false],
  ['empty reference', { reference: '' }, 'orders_by_time', false],
  ['date range', { dateRange: { start: T0 + 100n, end: T0 + 3000n } }, 'orders_by_time', false],
  ['live only', { liveOnly: true }, 'orders_live_by_time', false],
  ['live party', { liveOnly: true, partyIds: [hex(0xa03)] }, 'orders_live_by_party', false],
  ['live markets', { liveOnly: true, marketIds: [hex(0xb03), hex(0xb04)] }, 'orders_live_by_market', true],
  ['party and market', { partyIds: [hex(0xa01)], marketIds: [hex(0xb01)] }, 'orders_by_party', false],
  ['party, status, dates', { partyIds: [hex(0xa05)], statuses: [STATUS.FILLED], dateRange: { start: T0 + 10n } }, 'orders_by_party', false],
  ['reference beats party', { reference: 'ref-9', partyIds: [hex(0xa01)], liveOnly: true }, 'orders_by_reference', false],
  ['everything', {
    statuses: [STATUS.ACTIVE, STATUS.PARKED], types: [TYPE.LIMIT], timeInForces: [TIF.GTC], excludeLiquidity: true,
    partyIds: [hex(0xa01), hex(0xa02)], marketIds: [hex(0xb01), hex(0xb02), hex(0xb03)], dateRange: { start: T0, end: T0 + 4000n }, liveOnly: true,
  }, 'orders_live_by_party', true],
];

for (const [name, filter, index, merged] of ORDER_SHAPES) {
  test(`orders plan, ${name}: ${index}${merged ? ', merged branches' : ''}, indexed both ways`, () => {
    for (const req of requests(cursorKey)) {
      const what = `${name} ${JSON.stringify({ ...req, cursor: req.cursor && 'yes' })}`;
      const [page, beyond] = store.explainOrders(filter, req);
      assert.ok(page, what);
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

const BUNDLE_SHAPES: [string, BundleFilter, string][] = [
  ['no filter', {}, 'signer_added_by_time'],
  ['nodeId', { nodeId: hex(0xc1) }, 'signer_added_by_validator'],
  ['epochSeq', { epochSeq: 2n }, 'signer_added_by_epoch'],
  ['submitter', { submitter: '0xs' }, 'signer_added_by_submitter'],
  ['all', { nodeId: hex(0xc1), epochSeq: 2n, submitter: '0xs' }, 'signer_added_by_validator'],
];

for (const [name, filter, index] of BUNDLE_SHAPES) {
  test(`bundles plan, ${name}: ${index}, indexed both ways`, () => {
    const cursor: BundleKey = { timestamp: T0 + 20n, signatureId: hex(20) };
    for (const req of requests(cursor)) {
      const plans = store.explainBundles(filter, req);
      assert.equal(plans.length, req.cursor ? 2 : 1);
      for (const plan of plans) {
        assertIndexedOnly(plan, name);
        assert.ok(plan.some((l) => l.includes(`INDEX ${index}`)), `${name}: ${plan.join(' | ')}`);
      }
    }
  });
}
