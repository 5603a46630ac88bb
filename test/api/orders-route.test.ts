import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { bundleCursors, orderCursors } from '../../src/api/cursor.js';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { orderJson } from '../support/model.js';
import {
  T0,
  assertErrorReply,
  connection,
  get,
  hexId,
  makeBlock,
  makeOrder,
  serverOver,
  walk,
  type SpyStore,
} from './fixtures.js';

const M1 = hexId('a', 1);
const M2 = hexId('a', 2);
const P1 = hexId('b', 1);
const P2 = hexId('b', 2);
const LP = hexId('c', 1);
const NETWORK = 'network';

/**
 * n | party | market | status | type | tif | notes
 * Listed ascending, oldest first, by (createdAt on the microsecond, id
 * descending): 14 (createdAt -5 ns, answered -1000), 1..9, 11 and 10 (created
 * in the same microsecond, 11 later in it but with the higher id), 12, 13.
 */
const o = (n: number, x: Partial<Order>) => makeOrder(n, x);
const orders = {
  1: o(1, { partyId: P1, marketId: M1, status: STATUS.ACTIVE, type: TYPE.LIMIT, timeInForce: TIF.GTC }),
  2: o(2, { partyId: P1, marketId: M1, status: STATUS.FILLED, remaining: 0n, version: 1n }),
  3: o(3, { partyId: P2, marketId: M1, status: STATUS.ACTIVE, timeInForce: TIF.IOC }),
  4: o(4, { partyId: P2, marketId: M2, status: STATUS.PARKED, timeInForce: TIF.GTT, expiresAt: T0 + 4099n, peggedOrder: { reference: 1, offset: '5' } }),
  5: o(5, { partyId: NETWORK, marketId: M2, status: STATUS.FILLED, type: TYPE.NETWORK, timeInForce: TIF.FOK }),
  6: o(6, { partyId: P1, marketId: M2, status: STATUS.ACTIVE, liquidityProvisionId: LP }),
  7: o(7, { partyId: P2, marketId: M1, status: STATUS.REJECTED, reason: 14 }),
  8: o(8, { partyId: P1, marketId: M1, status: STATUS.ACTIVE, type: TYPE.MARKET, timeInForce: TIF.FOK, reference: 'shared' }),
  9: o(9, { partyId: P2, marketId: M2, status: STATUS.STOPPED, timeInForce: TIF.FOK, reason: 49, reference: 'shared' }),
  10: o(10, { partyId: P1, marketId: M1, status: STATUS.PARTIALLY_FILLED, icebergOrder: { peakSize: 5n, minimumVisibleSize: 2n, reservedRemaining: 3n } }),
  11: o(11, { partyId: P2, marketId: M1, status: STATUS.ACTIVE, timeInForce: TIF.GFA, createdAt: T0 + 10_999n }),
  12: o(12, { partyId: P1, marketId: M2, status: STATUS.CANCELLED, version: 2n }),
  13: o(13, { partyId: P1, marketId: M1, status: STATUS.PARKED, timeInForce: TIF.GTT, liquidityProvisionId: hexId('c', 2) }),
  14: o(14, { partyId: P2, marketId: M2, status: STATUS.ACTIVE, createdAt: -5n }),
} satisfies Record<number, Order>;

const blocks = [
  makeBlock(1, {
    orders: [
      orders[1],
      { ...orders[2], status: STATUS.ACTIVE, remaining: 10n },
      orders[2],
      orders[3], orders[4], orders[5], orders[6],
      { ...orders[12], status: STATUS.ACTIVE, version: 1n },
      // Ids arrive in upper case; the API shows and matches them in lower case.
      { ...orders[13], id: orders[13].id.toUpperCase(), partyId: P1.toUpperCase(), marketId: M1.toUpperCase() },
    ],
  }),
  makeBlock(2, { orders: [orders[7], orders[8], orders[9], orders[10], orders[11], orders[14]] }),
  makeBlock(3, { orders: [orders[12]] }),
];

const ASCENDING = [14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 10, 12, 13];
const idOf = (n: number) => hexId('0', n);
const newestFirst = (ns: number[]) => [...ns].reverse().map(idOf);

let app: FastifyInstance;
let store: SpyStore;

before(async () => {
  ({ app, store } = await serverOver(blocks));
});
after(() => app.close());

async function ids(url: string): Promise<string[]> {
  const conn = await connection(app, 'orders', url);
  return conn.edges.map((e) => e.node.id as string);
}

describe('GET /api/v2/orders', () => {
  test('lists the current state of every order, newest first, with the original JSON', async () => {
    const reply = await get(app, '/api/v2/orders');
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    const conn = (reply.json as { orders: { edges: { node: Record<string, unknown>; cursor: string }[] } }).orders;
    assert.deepEqual(conn.edges.map((e) => e.node.id), newestFirst(ASCENDING));
    assert.deepEqual(reply.json, {
      orders: {
        edges: conn.edges,
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: conn.edges[0]!.cursor, endCursor: conn.edges.at(-1)!.cursor },
      },
    });
    // Nodes go out verbatim as the store encoded them.
    const expected13 = orderJson({ ...orders[13], id: orders[13].id.toLowerCase() });
    assert.ok(reply.body.includes(`{"node":${expected13},"cursor":"`));
  });

  test('node fields: int64 as strings, enums as names, optional parts only where they apply', async () => {
    const byId = new Map((await connection(app, 'orders', '/api/v2/orders')).edges.map((e) => [e.node.id, e.node]));
    assert.deepEqual(byId.get(idOf(1)), {
      id: idOf(1), marketId: M1, partyId: P1, side: 'SIDE_BUY', price: '1000', size: '10', remaining: '10',
      timeInForce: 'TIME_IN_FORCE_GTC', type: 'TYPE_LIMIT', createdAt: String(T0 + 1000n), status: 'STATUS_ACTIVE',
      expiresAt: '0', reference: 'ref-1', updatedAt: '0', version: '1', batchId: '0', peggedOrder: null,
      liquidityProvisionId: '', postOnly: false, reduceOnly: false,
    });
    assert.deepEqual(byId.get(idOf(4))?.peggedOrder, { reference: 'PEGGED_REFERENCE_MID', offset: '5' });
    assert.equal(byId.get(idOf(7))?.reason, 'ORDER_ERROR_MARGIN_CHECK_FAILED');
    assert.equal(byId.get(idOf(9))?.reason, 'ORDER_ERROR_POST_ONLY_ORDER_WOULD_TRADE');
    assert.deepEqual(byId.get(idOf(10))?.icebergOrder, { peakSize: '5', minimumVisibleSize: '2', reservedRemaining: '3' });
    assert.equal(byId.get(idOf(14))?.createdAt, '-1000', 'times are on the microsecond, rounded down');
    assert.equal(byId.get(idOf(4))?.expiresAt, String(T0 + 4000n), 'expiresAt too');
    assert.equal(byId.get(idOf(2))?.status, 'STATUS_FILLED', 'the last event of a block wins');
    assert.equal(byId.get(idOf(12))?.status, 'STATUS_CANCELLED', 'a later block wins');
    assert.equal(byId.get(idOf(13))?.partyId, P1, 'ids are shown in lower case');
  });

  test('oldest first is exactly the reverse', async () => {
    assert.deepEqual(await ids('/api/v2/orders?pagination.newestFirst=false'), ASCENDING.map(idOf));
    assert.deepEqual(await ids('/api/v2/orders?pagination.newest_first=FALSE'), ASCENDING.map(idOf));
    assert.deepEqual(await ids('/api/v2/orders?pagination.newestFirst=1'), newestFirst(ASCENDING));
  });

  const filterCases: [string, number[]][] = [
    ['filter.statuses=STATUS_ACTIVE', [14, 1, 3, 6, 8, 11]],
    ['filter.statuses=1', [14, 1, 3, 6, 8, 11]],
    ['filter.statuses=STATUS_ACTIVE&filter.statuses=STATUS_PARKED', [14, 1, 3, 4, 6, 8, 11, 13]],
    ['filter.statuses=STATUS_ACTIVE,STATUS_PARKED', [14, 1, 3, 4, 6, 8, 11, 13]],
    ['filter.statuses=1,8', [14, 1, 3, 4, 6, 8, 11, 13]],
    ['filter.statuses=8', [4, 13]],
    ['filter.statuses=STATUS_EXPIRED', []],
    ['filter.types=TYPE_NETWORK', [5]],
    ['filter.types=TYPE_MARKET&filter.types=3', [5, 8]],
    ['filter.timeInForces=TIME_IN_FORCE_GTT', [4, 13]],
    ['filter.time_in_forces=TIME_IN_FORCE_IOC,4', [3, 5, 8, 9]],
    ['filter.excludeLiquidity=true', [14, 1, 2, 3, 4, 5, 7, 8, 9, 11, 10, 12]],
    ['filter.exclude_liquidity=t', [14, 1, 2, 3, 4, 5, 7, 8, 9, 11, 10, 12]],
    ['filter.excludeLiquidity=false', ASCENDING],
    [`filter.partyIds=${P1}`, [1, 2, 6, 8, 10, 12, 13]],
    [`filter.party_ids=${P1.toUpperCase()}`, [1, 2, 6, 8, 10, 12, 13]],
    ['filter.partyIds=network', [5]],
    [`filter.partyIds=${P1},network`, [1, 2, 5, 6, 8, 10, 12, 13]],
    [`filter.partyIds=${P1}&filter.party_ids=network`, [1, 2, 5, 6, 8, 10, 12, 13]],
    [`filter.partyIds=${hexId('b', 3)}`, []],
    [`filter.marketIds=${M2}`, [14, 4, 5, 6, 9, 12]],
    [`filter.market_ids=${M2.toUpperCase()}&filter.marketIds=${M1}`, ASCENDING],
    ['filter.reference=shared', [8, 9]],
    ['filter.reference=ref-1', [1]],
    ['filter.reference=', []],
    // Bounds are put on the microsecond, rounding down, before they are compared with createdAt (also on it).
    [`filter.dateRange.startTimestamp=${T0 + 3500n}&filter.dateRange.endTimestamp=${T0 + 10_001n}`, [3, 4, 5, 6, 7, 8, 9]],
    [`filter.date_range.start_timestamp=${T0 + 10_500n}`, [11, 10, 12, 13]],
    [`filter.dateRange.endTimestamp=${T0 + 1999n}`, [14]],
    [`filter.dateRange.startTimestamp=-1500&filter.dateRange.endTimestamp=1`, [14]],
    [`filter.dateRange.startTimestamp=-5&filter.dateRange.endTimestamp=-4`, []],
    [`filter.dateRange.startTimestamp=${T0 + 3000n}&filter.dateRange.endTimestamp=${T0 + 3999n}`, []],
    ['filter.liveOnly=true', [14, 1, 4, 6, 11, 13]],
    ['filter.live_only=True', [14, 1, 4, 6, 11, 13]],
    [`filter.liveOnly=1&filter.partyIds=${P1}`, [1, 6, 13]],
    [`filter.liveOnly=1&filter.partyIds=${P1}&filter.excludeLiquidity=1&filter.marketIds=${M1}`, [1]],
    [`filter.statuses=STATUS_ACTIVE&filter.marketIds=${M1}&filter.types=TYPE_LIMIT&filter.timeInForces=1`, [1]],
    ['filter.statuses=STATUS_FILLED&filter.reference=shared', []],
    ['filter.unknown=1&whatever=2', ASCENDING],
  ];
  for (const [qs, expected] of filterCases) {
    test(`filter ${qs}`, async () => {
      assert.deepEqual(await ids(`/api/v2/orders?${qs}`), newestFirst(expected));
      assert.deepEqual(
        await ids(`/api/v2/orders?${qs}&pagination.newestFirst=false`),
        expected.map(idOf),
      );
    });
  }

  test('filters reach the store normalized', async () => {
    store.orderCalls.length = 0;
    await get(
      app,
      `/api/v2/orders?filter.statuses=STATUS_ACTIVE,8&filter.statuses=1&filter.types=TYPE_LIMIT` +
        `&filter.timeInForces=TIME_IN_FORCE_GTT&filter.excludeLiquidity=true&filter.partyIds=${P1.toUpperCase()}` +
        `&filter.partyIds=network&filter.marketIds=${M1}&filter.reference=r&filter.dateRange.startTimestamp=1` +
        `&filter.dateRange.endTimestamp=2&filter.liveOnly=true&pagination.first=7&pagination.newestFirst=false`,
    );
    assert.deepEqual(store.orderCalls, [{
      filter: {
        statuses: [1, 8], types: [1], timeInForces: [2], excludeLiquidity: true, partyIds: [P1, 'network'],
        marketIds: [M1], reference: 'r', dateRange: { start: 1n, end: 2n }, liveOnly: true,
      },
      page: { newestFirst: false, mode: 'first', limit: 7 },
    }]);
  });

  test('paging forward and backward visits every row once, in order, both orderings', async () => {
    for (const [order, expected] of [['true', newestFirst(ASCENDING)], ['false', ASCENDING.map(idOf)]] as const) {
      for (const size of [1, 3, 5, 14, 20]) {
        const url = `/api/v2/orders?pagination.newestFirst=${order}`;
        const forward = await walk(app, 'orders', url, size, 'forward');
        assert.deepEqual(forward.map((e) => e.node.id), expected, `forward, size ${size}`);
        const backward = await walk(app, 'orders', url, size, 'backward');
        assert.deepEqual(backward.map((e) => e.node.id), expected, `backward, size ${size}`);
        assert.deepEqual(backward.map((e) => e.cursor), forward.map((e) => e.cursor));
      }
    }
    const filtered = await walk(app, 'orders', `/api/v2/orders?filter.partyIds=${P2}`, 2, 'backward');
    assert.deepEqual(filtered.map((e) => e.node.id), newestFirst([14, 3, 4, 7, 9, 11]));
  });

  test('exact page info around a cursor', async () => {
    const all = await connection(app, 'orders', '/api/v2/orders');
    const cursorOf = (i: number) => all.edges[i]!.cursor;
    const idsOf = (c: { edges: { node: Record<string, unknown> }[] }) => c.edges.map((e) => e.node.id);

    const firstTwo = await connection(app, 'orders', '/api/v2/orders?pagination.first=2');
    assert.deepEqual(idsOf(firstTwo), idsOf(all).slice(0, 2));
    assert.deepEqual(firstTwo.pageInfo, { hasNextPage: true, hasPreviousPage: false, startCursor: cursorOf(0), endCursor: cursorOf(1) });

    const lastTwo = await connection(app, 'orders', '/api/v2/orders?pagination.last=2');
    assert.deepEqual(idsOf(lastTwo), idsOf(all).slice(12), 'a last page comes in listing order');
    assert.deepEqual(lastTwo.pageInfo, { hasNextPage: false, hasPreviousPage: true, startCursor: cursorOf(12), endCursor: cursorOf(13) });

    const middle = await connection(app, 'orders', `/api/v2/orders?pagination.first=3&pagination.after=${cursorOf(4)}`);
    assert.deepEqual(idsOf(middle), idsOf(all).slice(5, 8));
    assert.deepEqual(middle.pageInfo, { hasNextPage: true, hasPreviousPage: true, startCursor: cursorOf(5), endCursor: cursorOf(7) });

    const before = await connection(app, 'orders', `/api/v2/orders?pagination.last=3&pagination.before=${cursorOf(2)}`);
    assert.deepEqual(idsOf(before), idsOf(all).slice(0, 2));
    assert.deepEqual(before.pageInfo, { hasNextPage: true, hasPreviousPage: false, startCursor: cursorOf(0), endCursor: cursorOf(1) });

    const afterOnly = await connection(app, 'orders', `/api/v2/orders?pagination.after=${cursorOf(11)}`);
    assert.deepEqual(idsOf(afterOnly), idsOf(all).slice(12));
    assert.equal(afterOnly.pageInfo.hasNextPage, false);
    assert.equal(afterOnly.pageInfo.hasPreviousPage, true);

    const beforeOnly = await connection(app, 'orders', `/api/v2/orders?pagination.before=${cursorOf(1)}`);
    assert.deepEqual(idsOf(beforeOnly), idsOf(all).slice(0, 1));

    const pastEnd = await connection(app, 'orders', `/api/v2/orders?pagination.first=3&pagination.after=${cursorOf(13)}`);
    assert.deepEqual(pastEnd.edges, []);
    assert.deepEqual(pastEnd.pageInfo, { hasNextPage: false, hasPreviousPage: true, startCursor: '', endCursor: '' });

    // A cursor keeps its position when the ordering flips: row 4 of the newest-first list is order 9.
    const flipped = await connection(app, 'orders', `/api/v2/orders?pagination.newestFirst=false&pagination.first=2&pagination.after=${cursorOf(4)}`);
    assert.deepEqual(idsOf(flipped), [idOf(11), idOf(10)]);
  });

  test('a cursor for a row that no longer matches still pages from its position', async () => {
    // Cursor at order 2 (FILLED), used with an ACTIVE filter.
    const cursor = orderCursors.encode({ createdAt: T0 + 2000n, id: idOf(2) });
    const page = await connection(app, 'orders', `/api/v2/orders?filter.statuses=STATUS_ACTIVE&pagination.first=2&pagination.after=${cursor}`);
    assert.deepEqual(page.edges.map((e) => e.node.id), [idOf(1), idOf(14)]);
    assert.equal(page.pageInfo.hasPreviousPage, true);
    assert.equal(page.pageInfo.hasNextPage, false);
  });

  const badCases: [string, number, ...string[]][] = [
    ['pagination.first=0', 10028, 'pagination.first', '"0"'],
    ['pagination.first=5001', 10028, 'pagination.first', '"5001"'],
    ['pagination.last=abc', 10028, 'pagination.last', '"abc"'],
    ['pagination.first=1&pagination.last=1', 10028, 'pagination.first', 'pagination.last'],
    ['pagination.newestFirst=nope', 10028, 'pagination.newestFirst', '"nope"'],
    ['pagination.after=not-a-cursor', 10028, 'pagination.after', '"not-a-cursor"'],
    ['pagination.before=%22%7B%7D%22', 10028, 'pagination.before'],
    ['filter.statuses=STATUS_BOGUS', 10029, 'filter.statuses', '"STATUS_BOGUS"'],
    ['filter.statuses=STATUS_ACTIVE,42', 10029, 'filter.statuses', '"42"'],
    ['filter.types=LIMIT', 10029, 'filter.types', '"LIMIT"'],
    ['filter.timeInForces=TIME_IN_FORCE_XYZ', 10029, 'filter.timeInForces', '"TIME_IN_FORCE_XYZ"'],
    ['filter.party_ids=0xabc', 10029, 'filter.party_ids', '"0xabc"'],
    [`filter.marketIds=${M1}z`, 10029, 'filter.marketIds', `"${M1}z"`],
    ['filter.excludeLiquidity=2', 10029, 'filter.excludeLiquidity', '"2"'],
    ['filter.liveOnly=yes', 10029, 'filter.liveOnly', '"yes"'],
    ['filter.dateRange.startTimestamp=yesterday', 10029, 'filter.dateRange.startTimestamp', '"yesterday"'],
    ['filter.dateRange.startTimestamp=3&filter.dateRange.endTimestamp=2', 10029, 'filter.dateRange.startTimestamp', '"3"', '"2"'],
  ];
  for (const [qs, detailCode, ...mentions] of badCases) {
    test(`400 for ${qs}`, async () => {
      assertErrorReply(await get(app, `/api/v2/orders?${qs}`), 400, 3, detailCode, ...mentions);
    });
  }

  test('400 for cursor combinations', async () => {
    const c = (await connection(app, 'orders', '/api/v2/orders?pagination.first=1')).pageInfo.endCursor;
    for (const [qs, ...mentions] of [
      [`pagination.after=${c}&pagination.before=${c}`, 'pagination.after', 'pagination.before'],
      [`pagination.first=2&pagination.before=${c}`, 'pagination.first', 'pagination.before'],
      [`pagination.last=2&pagination.after=${c}`, 'pagination.last', 'pagination.after'],
    ]) {
      assertErrorReply(await get(app, `/api/v2/orders?${qs}`), 400, 3, 10028, ...mentions);
    }
  });

  test('a bundles cursor, or a garbled one, is a 400', async () => {
    const bundleCursor = bundleCursors.encode({ timestamp: T0 + 1n, signatureId: idOf(1) });
    assertErrorReply(await get(app, `/api/v2/orders?pagination.after=${bundleCursor}`), 400, 3, 10028, 'pagination.after', bundleCursor);
    const good = orderCursors.encode({ createdAt: T0 + 5n, id: idOf(5) });
    const garbled = good.slice(0, 20) + (good[20] === 'A' ? 'B' : 'A') + good.slice(21);
    assertErrorReply(await get(app, `/api/v2/orders?pagination.before=${garbled}`), 400, 3, 10028, 'pagination.before', garbled);
    assertErrorReply(await get(app, `/api/v2/orders?pagination.after=${good.slice(0, -1)}`), 400, 3, 10028, 'pagination.after');
  });
});
