/**
 * The reference model must itself be right: checked here against answers
 * computed by hand from the rules of docs/compatibility.md (sections 3, "JSON
 * encoding", and 5, "Ordering and paging"), and against what the original
 * answers for the real recording (section 10, "The real network's recording").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import { STATUS } from '../../src/domain/enums.js';
import type { OrderFilter, OrderKey } from '../../src/domain/order.js';
import type { PageRequest, PageRow } from '../../src/domain/page.js';
import type { QueryStore } from '../../src/store/store.js';
import {
  bundleJson,
  compareBundleKeys,
  compareOrderKeys,
  createModelStore,
  microsFloor,
  orderJson,
  packSignatures,
  pageOf,
} from '../support/model.js';
import { readModelBlocks } from '../support/model-events.js';
import { REAL, realRecording } from '../support/real-recording.js';
import { T0, hexId, makeBlock, makeOrder, makeSignature, makeSignerAdded } from './fixtures.js';

/** A whole microsecond with room on both sides: the example of docs/compatibility.md, section 4, truncated. */
const M = 1_678_444_076_736_102_000n;
const ALL = { newestFirst: true, mode: 'first', limit: 100 } as const;
const OLDEST_FIRST = { newestFirst: false, mode: 'first', limit: 100 } as const;

async function orderIds(store: QueryStore, filter: OrderFilter = {}, page: PageRequest<OrderKey> = ALL): Promise<string[]> {
  return (await store.listOrders(filter, page)).rows.map((r) => r.key.id);
}

test('times are answered in whole microseconds, rounded down', () => {
  for (const [ns, micros] of [
    [1_678_444_076_736_102_285n, 1_678_444_076_736_102_000n], [M + 999n, M], [M, M], [0n, 0n], [999n, 0n],
    [1000n, 1000n], [-1n, -1000n], [-1000n, -1000n], [-1001n, -2000n], [-1500n, -2000n],
  ] as const) {
    assert.equal(microsFloor(ns), micros, `${ns}`);
  }
});

test('orderJson: field order, microsecond times, lower-case ids, no reason, peggedOrder null', () => {
  const o = makeOrder(1, {
    id: hexId('A', 1), marketId: hexId('B', 2), partyId: hexId('C', 3), liquidityProvisionId: hexId('D', 4),
    createdAt: M + 285n, updatedAt: M + 1911n, expiresAt: M + 5_000_001n, reason: 0,
  });
  assert.equal(
    orderJson(o),
    `{"id":"${hexId('a', 1)}","marketId":"${hexId('b', 2)}","partyId":"${hexId('c', 3)}","side":"SIDE_BUY",` +
      `"price":"1000","size":"10","remaining":"10","timeInForce":"TIME_IN_FORCE_GTC","type":"TYPE_LIMIT",` +
      `"createdAt":"${M}","status":"STATUS_ACTIVE","expiresAt":"${M + 5_000_000n}","reference":"ref-1",` +
      `"updatedAt":"${M + 1000n}","version":"1","batchId":"0","peggedOrder":null,` +
      `"liquidityProvisionId":"${hexId('d', 4)}","postOnly":false,"reduceOnly":false}`,
  );
  const network = JSON.parse(orderJson(makeOrder(2, { partyId: 'network', createdAt: -1500n, updatedAt: 0n })));
  assert.equal(network.partyId, 'network');
  assert.equal(network.createdAt, '-2000', 'rounded down, not toward zero');
  assert.equal(network.updatedAt, '0');
});

test('orderJson: reason only when set to an error; an unknown number stays a number', () => {
  const reasonOf = (reason: number | undefined) => JSON.parse(orderJson(makeOrder(1, reason === undefined ? {} : { reason }))).reason;
  assert.equal(reasonOf(undefined), undefined);
  assert.equal(reasonOf(0), undefined, 'ORDER_ERROR_UNSPECIFIED is left out');
  assert.equal(reasonOf(14), 'ORDER_ERROR_MARGIN_CHECK_FAILED');
  assert.equal(reasonOf(50), 'ORDER_ERROR_REDUCE_ONLY_ORDER_WOULD_NOT_REDUCE_POSITION');
  assert.equal(reasonOf(38), 38, 'unused number');
  assert.equal(reasonOf(51), 51, 'beyond the table');
  assert.ok(!('reason' in JSON.parse(orderJson(makeOrder(1, { reason: 0 })))), 'the key itself is absent');
  const unknown = JSON.parse(orderJson(makeOrder(3, { status: 99, side: 7, type: 4, timeInForce: 9 })));
  assert.deepEqual([unknown.status, unknown.side, unknown.type, unknown.timeInForce], [99, 7, 4, 9]);
});

test('orderJson: peggedOrder always present, null without a reference; icebergOrder only when carried', () => {
  const json = (over: Parameters<typeof makeOrder>[1]) => JSON.parse(orderJson(makeOrder(1, over)));
  assert.equal(json({}).peggedOrder, null);
  assert.ok('peggedOrder' in json({}));
  assert.equal(json({ peggedOrder: { reference: 0, offset: '0' } }).peggedOrder, null);
  assert.equal(json({ peggedOrder: { reference: 0, offset: '25' } }).peggedOrder, null, 'reference 0 is no peg, whatever the offset');
  assert.deepEqual(json({ peggedOrder: { reference: 3, offset: '-2' } }).peggedOrder, { reference: 'PEGGED_REFERENCE_BEST_ASK', offset: '-2' });
  assert.deepEqual(json({ peggedOrder: { reference: 1, offset: '0' } }).peggedOrder, { reference: 'PEGGED_REFERENCE_MID', offset: '0' });
  assert.deepEqual(json({ peggedOrder: { reference: 9, offset: '1' } }).peggedOrder, { reference: 9, offset: '1' });
  assert.ok(!('icebergOrder' in json({})));
  const full = makeOrder(2, {
    reason: 21,
    peggedOrder: { reference: 2, offset: '7' },
    icebergOrder: { peakSize: 1n, minimumVisibleSize: 2n, reservedRemaining: 18_446_744_073_709_551_615n },
    reference: 'quote"and\\slash',
  });
  const parsed = JSON.parse(orderJson(full));
  assert.deepEqual(Object.keys(parsed), [
    'id', 'marketId', 'partyId', 'side', 'price', 'size', 'remaining', 'timeInForce', 'type', 'createdAt',
    'status', 'expiresAt', 'reference', 'reason', 'updatedAt', 'version', 'batchId', 'peggedOrder',
    'liquidityProvisionId', 'postOnly', 'reduceOnly', 'icebergOrder',
  ]);
  assert.deepEqual(parsed.icebergOrder, { peakSize: '1', minimumVisibleSize: '2', reservedRemaining: '18446744073709551615' });
  assert.equal(parsed.reference, 'quote"and\\slash');
});

test('bundleJson: addresses 0x and lower case whatever their case, timestamp in microseconds', () => {
  const b = makeSignerAdded(1, {
    newSigner: '0XAbCdEf0123456789aBcDeF0123456789ABCDEF01',
    submitter: '0xABCDEF0123456789ABCDEF0123456789ABCDEF02',
    timestamp: M + 1999n,
    nonce: '18446744073709551616',
    epochSeq: 12n,
  });
  assert.equal(
    bundleJson(b, '0x01'),
    '{"newSigner":"0xabcdef0123456789abcdef0123456789abcdef01","submitter":"0xabcdef0123456789abcdef0123456789abcdef02",' +
      `"nonce":"18446744073709551616","timestamp":"${M + 1000n}","signatures":"0x01","epochSeq":"12"}`,
  );
});

test('packSignatures: distinct, ascending bytes, 0x-prefixed; empty string for none', () => {
  assert.equal(packSignatures([]), '');
  assert.equal(packSignatures([Uint8Array.of(0xff), Uint8Array.of(0x00, 0x01), Uint8Array.of(0xff), Uint8Array.of(0x00)]), '0x000001ff');
});

test('the comparators are the ascending listing order: orders createdAt ASC then id DESC, bundles both ASC', () => {
  const key = (createdAt: bigint, n: number): OrderKey => ({ createdAt, id: hexId('0', n) });
  assert.ok(compareOrderKeys(key(1n, 5), key(2n, 1)) < 0, 'older first');
  assert.ok(compareOrderKeys(key(1n, 5), key(1n, 1)) < 0, 'same time: the larger id first');
  assert.ok(compareOrderKeys(key(1n, 1), key(1n, 5)) > 0);
  assert.equal(compareOrderKeys(key(1n, 1), key(1n, 1)), 0);
  assert.ok(compareBundleKeys({ timestamp: 1n, signatureId: hexId('0', 1) }, { timestamp: 1n, signatureId: hexId('0', 2) }) < 0);
  assert.ok(compareBundleKeys({ timestamp: 1n, signatureId: hexId('0', 9) }, { timestamp: 2n, signatureId: hexId('0', 1) }) < 0);
});

/** One block of orders around the microsecond M, at nanoseconds whose order is not the ids' order. */
function tiedOrders(): Block {
  return makeBlock(1, {
    orders: [
      makeOrder(3, { createdAt: M + 102n }), // earliest nanosecond of M, largest id there
      makeOrder(1, { createdAt: M + 911n }), // latest nanosecond of M, smallest id
      makeOrder(2, { createdAt: M + 500n }),
      makeOrder(9, { createdAt: M - 1n }), // the microsecond before
      makeOrder(0, { createdAt: M + 1000n }), // the microsecond after
    ],
  });
}

test('newest first is createdAt (in microseconds) DESC, then id ASC; oldest first is its exact reverse', async () => {
  const store = createModelStore([tiedOrders()]);
  const newest = await orderIds(store);
  assert.deepEqual(newest, [0, 1, 2, 3, 9].map((n) => hexId('0', n)), 'the tie at M goes by id, not by nanoseconds');
  assert.deepEqual(await orderIds(store, {}, OLDEST_FIRST), [...newest].reverse());
  const page = await store.listOrders({}, ALL);
  assert.deepEqual(page.rows.map((r) => r.key.createdAt), [M + 1000n, M, M, M, M - 1000n], 'keys hold the truncated time');
  assert.deepEqual(page.rows.map((r) => JSON.parse(r.json).createdAt), [M + 1000n, M, M, M, M - 1000n].map(String));
});

test('cursors walk through a tie in both directions, a row at a time', async () => {
  const store = createModelStore([tiedOrders()]);
  for (const newestFirst of [true, false]) {
    const all = await orderIds(store, {}, { newestFirst, mode: 'first', limit: 100 });
    const forward: string[] = [];
    let cursor: OrderKey | undefined;
    for (;;) {
      const page = await store.listOrders({}, { newestFirst, mode: 'first', limit: 1, ...(cursor ? { cursor } : {}) });
      forward.push(...page.rows.map((r) => r.key.id));
      if (!page.hasNextPage) break;
      cursor = page.rows[0]!.key;
    }
    assert.deepEqual(forward, all, `forward, newestFirst ${newestFirst}`);
    const backward: string[] = [];
    cursor = undefined;
    for (;;) {
      const page = await store.listOrders({}, { newestFirst, mode: 'last', limit: 1, ...(cursor ? { cursor } : {}) });
      backward.unshift(...page.rows.map((r) => r.key.id));
      if (!page.hasPreviousPage) break;
      cursor = page.rows[0]!.key;
    }
    assert.deepEqual(backward, all, `backward, newestFirst ${newestFirst}`);
  }
});

test('dateRange compares microseconds: bounds rounded down, start inclusive, end exclusive', async () => {
  const store = createModelStore([makeBlock(1, {
    orders: [
      makeOrder(1, { createdAt: M + 285n }),
      makeOrder(2, { createdAt: M + 1500n }), // microsecond M + 1000
      makeOrder(3, { createdAt: -1500n }), // microsecond -2000
    ],
  })]);
  const ids = async (start?: bigint, end?: bigint) =>
    (await orderIds(store, { dateRange: { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) } }, OLDEST_FIRST))
      .map((id) => Number.parseInt(id.slice(-8), 16));
  assert.deepEqual(await ids(M + 999n), [1, 2], 'start M+999 is M: the order at M+285 is in');
  assert.deepEqual(await ids(M + 1000n), [2], 'start inclusive');
  assert.deepEqual(await ids(M + 1001n), [2], 'start M+1001 is M+1000: the order at M+1500 is in');
  assert.deepEqual(await ids(undefined, M + 1999n), [3, 1], 'end M+1999 is M+1000, exclusive: the order at M+1500 is out');
  assert.deepEqual(await ids(undefined, M + 1000n), [3, 1], 'end exclusive');
  assert.deepEqual(await ids(undefined, M + 286n), [3], 'end M+286 is M: the order at M+285 is out');
  assert.deepEqual(await ids(-1999n, 0n), [3], 'start -1999 is -2000');
  assert.deepEqual(await ids(-1000n), [1, 2], 'start -1000 is above -2000');
  assert.deepEqual(await ids(M, M), [], 'an empty range');
});

test('orders: the last event within a block wins, a later block wins, ids in either case are one order', async () => {
  const id = hexId('A', 1);
  const store = createModelStore([
    makeBlock(1, { orders: [makeOrder(1, { id, status: STATUS.ACTIVE }), makeOrder(1, { id, status: STATUS.PARKED })] }),
    makeBlock(2, { orders: [makeOrder(1, { id: id.toLowerCase(), status: STATUS.FILLED, version: 3n })] }),
    makeBlock(3, { orders: [makeOrder(2, { status: STATUS.ACTIVE })] }),
  ]);
  const page = await store.listOrders({}, OLDEST_FIRST);
  assert.deepEqual(page.rows.map((r) => [r.key.id, JSON.parse(r.json).status, JSON.parse(r.json).version]), [
    [id.toLowerCase(), 'STATUS_FILLED', '3'],
    [hexId('0', 2), 'STATUS_ACTIVE', '1'],
  ]);
  assert.deepEqual(await orderIds(store, { statuses: [STATUS.PARKED] }), [], 'an overwritten state no longer matches');
  assert.deepEqual(await orderIds(store, { marketIds: [hexId('b', 1)] }), []);
  assert.deepEqual(await orderIds(store, { marketIds: [hexId('A', 1)], statuses: [STATUS.FILLED] }), [id.toLowerCase()], 'ids match by their bytes');
});

test('a height seen again is skipped: the first block of a height wins, and so does a higher one', async () => {
  const first = makeBlock(1, { hash: hexId('1', 1), orders: [makeOrder(1, { status: STATUS.ACTIVE })] });
  const again = makeBlock(1, {
    hash: hexId('2', 1), time: first.time + 5n,
    orders: [makeOrder(1, { status: STATUS.FILLED }), makeOrder(2)],
    signersAdded: [makeSignerAdded(1)],
  });
  const restarted = createModelStore([first, again]);
  assert.deepEqual(await restarted.lastBlock(), { height: 1n, time: first.time, chainId: 'test-chain', hash: hexId('1', 1) });
  const page = await restarted.listOrders({}, ALL);
  assert.deepEqual(page.rows.map((r) => [r.key.id, JSON.parse(r.json).status]), [[hexId('0', 1), 'STATUS_ACTIVE']]);
  assert.deepEqual((await restarted.listBundles({}, ALL)).rows, []);

  const behind = createModelStore([makeBlock(1), makeBlock(3, { orders: [makeOrder(3)] }), makeBlock(2, { orders: [makeOrder(2)] })]);
  assert.deepEqual(await orderIds(behind), [hexId('0', 3)], 'a lower height after a higher one is skipped');
  assert.equal((await behind.lastBlock())?.height, 3n);
});

test('pages name the last block replayed (its time as the event gave it); none before any block', async () => {
  const blocks = [makeBlock(4, { time: M + 123n }), makeBlock(5, { time: M + 2_000_456n, hash: hexId('9', 5) })];
  const store = createModelStore(blocks);
  assert.deepEqual((await store.listOrders({}, ALL)).lastBlock, { height: 5n, time: M + 2_000_456n });
  assert.deepEqual((await store.listBundles({}, ALL)).lastBlock, { height: 5n, time: M + 2_000_456n });
  assert.deepEqual(await store.lastBlock(), { height: 5n, time: M + 2_000_456n, chainId: 'test-chain', hash: hexId('9', 5) });
  const empty = createModelStore([]);
  assert.ok(!('lastBlock' in (await empty.listOrders({}, ALL))));
  assert.ok(!('lastBlock' in (await empty.listBundles({}, ALL))));
  assert.equal(await empty.lastBlock(), undefined);
});

test('bundles: replaced by signature id, signatures from any block and either case, filters by bytes', async () => {
  const sid = hexId('5', 1);
  const store = createModelStore([
    makeBlock(1, { nodeSignatures: [makeSignature(sid.toUpperCase(), [0x09])] }),
    makeBlock(2, {
      signersAdded: [
        makeSignerAdded(1, { nonce: 'a', timestamp: T0 + 1n }),
        makeSignerAdded(2, { validatorId: hexId('E', 9), submitter: '0XABCDEF0123456789ABCDEF0123456789ABCDEF02', timestamp: T0 + 2n }),
      ],
    }),
    makeBlock(3, { signersAdded: [makeSignerAdded(1, { nonce: 'b', timestamp: T0 + 1n })], nodeSignatures: [makeSignature(sid, [0x01]), makeSignature(sid, [0x09])] }),
  ]);
  const all = await store.listBundles({}, { newestFirst: false, mode: 'first', limit: 10 });
  assert.deepEqual(all.rows.map((r) => JSON.parse(r.json)), [
    { newSigner: makeSignerAdded(1).newSigner, submitter: makeSignerAdded(1).submitter, nonce: 'b',
      timestamp: String(T0), signatures: '0x0109', epochSeq: '7' },
    { newSigner: makeSignerAdded(2).newSigner, submitter: '0xabcdef0123456789abcdef0123456789abcdef02', nonce: '1002',
      timestamp: String(T0), signatures: '', epochSeq: '7' },
  ]);
  const ids = async (filter: Parameters<QueryStore['listBundles']>[0]) =>
    (await store.listBundles(filter, { newestFirst: true, mode: 'first', limit: 10 })).rows.map((r) => r.key.signatureId);
  assert.deepEqual(await ids({ nodeId: hexId('e', 9) }), [hexId('5', 2)]);
  assert.deepEqual(await ids({ submitter: '0xabcdef0123456789abcdef0123456789abcdef02' }), [hexId('5', 2)], 'the event\'s 0X and upper case match');
  assert.deepEqual(await ids({ epochSeq: 8n }), []);
  assert.deepEqual(await ids({ epochSeq: 7n }), [hexId('5', 2), hexId('5', 1)]);
});

test('bundles newest first: timestamp (in microseconds) DESC, then signature id DESC', async () => {
  const store = createModelStore([makeBlock(1, {
    signersAdded: [
      makeSignerAdded(1, { timestamp: M + 900n }), // later nanosecond, smaller id
      makeSignerAdded(2, { timestamp: M + 100n }),
      makeSignerAdded(3, { timestamp: M - 5n }),
    ],
  })]);
  const page = await store.listBundles({}, ALL);
  assert.deepEqual(page.rows.map((r) => r.key.signatureId), [2, 1, 3].map((n) => hexId('5', n)));
  assert.deepEqual(page.rows.map((r) => r.key.timestamp), [M, M, M - 1000n]);
  const oldest = await store.listBundles({}, OLDEST_FIRST);
  assert.deepEqual(oldest.rows.map((r) => r.key.signatureId), [3, 1, 2].map((n) => hexId('5', n)));
});

/** Paging stated by index, independently of pageOf's cursor comparisons. */
test('pageOf agrees with index arithmetic for every cursor row, size and mode', () => {
  // Ascending by key: createdAt ascending, and in pairs sharing a createdAt the larger id first.
  const rows: PageRow<OrderKey>[] = Array.from({ length: 9 }, (_, i) => ({
    json: String(i),
    key: { createdAt: BigInt(Math.floor(i / 2)), id: hexId('0', 9 - i) },
  }));
  for (const newestFirst of [true, false]) {
    const list = newestFirst ? [...rows].reverse() : rows;
    for (let limit = 1; limit <= 10; limit++) {
      const noCursorFirst = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'first', limit });
      assert.deepEqual(noCursorFirst, { rows: list.slice(0, limit), hasNextPage: limit < 9, hasPreviousPage: false });
      const noCursorLast = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'last', limit });
      assert.deepEqual(noCursorLast, { rows: list.slice(Math.max(0, 9 - limit)), hasNextPage: false, hasPreviousPage: limit < 9 });
      for (let i = 0; i < 9; i++) {
        const cursor = list[i]!.key;
        const first = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'first', limit, cursor });
        assert.deepEqual(first, { rows: list.slice(i + 1, i + 1 + limit), hasNextPage: i + 1 + limit < 9, hasPreviousPage: true });
        const last = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'last', limit, cursor });
        assert.deepEqual(last, { rows: list.slice(Math.max(0, i - limit), i), hasNextPage: true, hasPreviousPage: i - limit > 0 });
      }
    }
  }
});

test('pageOf with a cursor between rows or beyond the ends', () => {
  const rows: PageRow<OrderKey>[] = [10n, 20n, 30n].map((t, i) => ({ json: String(i), key: { createdAt: t, id: hexId('0', i) } }));
  const between = { createdAt: 15n, id: hexId('0', 0) };
  const asc = (mode: 'first' | 'last', cursor: OrderKey) => pageOf(rows, compareOrderKeys, { newestFirst: false, mode, limit: 5, cursor });
  assert.deepEqual(asc('first', between), { rows: rows.slice(1), hasNextPage: false, hasPreviousPage: true });
  assert.deepEqual(asc('last', between), { rows: rows.slice(0, 1), hasNextPage: true, hasPreviousPage: false });
  const beyond = { createdAt: 99n, id: hexId('0', 0) };
  assert.deepEqual(asc('first', beyond), { rows: [], hasNextPage: false, hasPreviousPage: true });
  assert.deepEqual(asc('last', beyond), { rows, hasNextPage: false, hasPreviousPage: false });
  const beforeAll = { createdAt: -1n, id: hexId('0', 0) };
  assert.deepEqual(asc('first', beforeAll), { rows, hasNextPage: false, hasPreviousPage: false });
  assert.deepEqual(asc('last', beforeAll), { rows: [], hasNextPage: true, hasPreviousPage: false });
  // Within a createdAt, ids descend in ascending order: a cursor between two ids of one time.
  const tied: PageRow<OrderKey>[] = [3, 1].map((n) => ({ json: String(n), key: { createdAt: 5n, id: hexId('0', n) } }));
  const mid = { createdAt: 5n, id: hexId('0', 2) };
  assert.deepEqual(pageOf(tied, compareOrderKeys, { newestFirst: true, mode: 'first', limit: 5, cursor: mid }).rows.map((r) => r.json), ['3']);
  assert.deepEqual(pageOf(tied, compareOrderKeys, { newestFirst: false, mode: 'first', limit: 5, cursor: mid }).rows.map((r) => r.json), ['1']);
});

test('over the real recording, the model answers what the original data node answers (facts, section 7)', async (t) => {
  const path = realRecording(t);
  if (path === undefined) return;
  // The model's own reading of the file: its protobuf reader and block assembly, none of src/ingest.
  const blocks = readModelBlocks(path);
  assert.equal(blocks.length, 1088, 'every block, height 1 twice');
  const store = createModelStore(blocks);
  const last = await store.lastBlock();
  assert.equal(last?.height, REAL.lastHeight);
  assert.equal(microsFloor(last!.time).toString(), REAL.lastBlockTimestamp);
  assert.equal((await store.listOrders({}, { newestFirst: true, mode: 'first', limit: 1000 })).rows.length, REAL.orders);
  const market = await store.listOrders({ marketIds: [REAL.market] }, ALL);
  assert.deepEqual(
    market.rows.map((r) => {
      const node = JSON.parse(r.json);
      return [node.id.slice(0, 8), node.createdAt];
    }),
    REAL.marketNewestFirst.map(([id, createdAt]) => [id, createdAt]),
  );
  // The first start's height 1 is the one kept.
  const restartedState = createModelStore(blocks.slice(0, 2));
  assert.equal((await restartedState.lastBlock())?.hash, REAL.firstHashes[0]);
});
