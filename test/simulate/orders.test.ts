import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import { NETWORK_PARTY, type Order } from '../../src/domain/order.js';
import { simulateEvents } from '../../src/simulate/simulate.js';
import { chain, HEX64, indexOrders, micros, type OrderEventAt } from './fixture.js';

const TERMINAL: readonly number[] = [
  STATUS.EXPIRED, STATUS.CANCELLED, STATUS.STOPPED, STATUS.FILLED, STATUS.REJECTED, STATUS.PARTIALLY_FILLED,
];
const TWO_POW_53 = 2n ** 53n;
const MAX_UINT64 = 2n ** 64n - 1n;

function allStates(orders: Map<string, OrderEventAt[]>): Order[] {
  return [...orders.values()].flatMap((list) => list.map((e) => e.order));
}

function last<T>(list: readonly T[]): T {
  const x = list[list.length - 1];
  assert.ok(x !== undefined);
  return x;
}

test('every status, type and time in force occurs', async () => {
  const { orders } = await chain();
  const states = allStates(orders);
  const statuses = new Set(states.map((o) => o.status));
  for (const s of Object.values(STATUS).filter((s) => s !== STATUS.UNSPECIFIED)) assert.ok(statuses.has(s), `status ${s}`);
  const types = new Set(states.map((o) => o.type));
  for (const t of [TYPE.LIMIT, TYPE.MARKET, TYPE.NETWORK]) assert.ok(types.has(t), `type ${t}`);
  const tifs = new Set(states.map((o) => o.timeInForce));
  for (const t of [TIF.GTC, TIF.GTT, TIF.IOC, TIF.FOK, TIF.GFA, TIF.GFN]) assert.ok(tifs.has(t), `time in force ${t}`);
  assert.ok(!statuses.has(STATUS.UNSPECIFIED) && !types.has(TYPE.UNSPECIFIED) && !tifs.has(TIF.UNSPECIFIED));
});

test('pegged, iceberg, liquidity, post-only, reduce-only, referenced and auction-batch orders occur', async () => {
  const { orders } = await chain();
  const firsts = [...orders.values()].map((list) => list[0]!.order);
  const count = (p: (o: Order) => boolean): number => firsts.filter(p).length;
  assert.ok(count((o) => o.peggedOrder !== undefined) > 50);
  assert.ok(count((o) => o.icebergOrder !== undefined) > 50);
  assert.ok(count((o) => o.liquidityProvisionId !== '') > 50);
  assert.ok(count((o) => o.postOnly) > 20);
  assert.ok(count((o) => o.reduceOnly) > 20);
  assert.ok(count((o) => o.batchId > 0n) > 20);
  assert.ok(count((o) => /^bot-\d+-\d{6}$/.test(o.reference)) > 100);
  // Some references are shared by several orders of one party.
  const byReference = new Map<string, number>();
  for (const o of firsts) if (o.reference !== '') byReference.set(o.reference, (byReference.get(o.reference) ?? 0) + 1);
  assert.ok([...byReference.values()].some((n) => n >= 5), 'a reference used by many orders');
  assert.ok(count((o) => o.reference === '') > firsts.length / 3, 'many orders carry no reference');
});

test('ids are 64 hex (liquidity provisions in either case); the network party places only network orders, and only it does', async () => {
  const { orders } = await chain();
  const provisions = new Set<string>();
  for (const o of allStates(orders)) {
    assert.match(o.id, HEX64);
    assert.match(o.marketId, HEX64);
    if (o.partyId === NETWORK_PARTY) assert.equal(o.type, TYPE.NETWORK);
    else {
      assert.match(o.partyId, HEX64);
      assert.notEqual(o.type, TYPE.NETWORK);
    }
    if (o.liquidityProvisionId !== '') {
      assert.ok(/^[0-9a-f]{64}$/.test(o.liquidityProvisionId) || /^[0-9A-F]{64}$/.test(o.liquidityProvisionId), o.liquidityProvisionId);
      provisions.add(o.liquidityProvisionId);
    }
  }
  const upper = [...provisions].filter((id) => /[A-F]/.test(id)).length;
  assert.ok(upper >= 3 && upper < provisions.size, `${upper} of ${provisions.size} provision ids in upper case`);
  const markets = new Set(allStates(orders).map((o) => o.marketId));
  assert.equal(markets.size, 20);
});

test('an error reason only on REJECTED and STOPPED orders, every rejection has one; some others carry reason 0 explicitly', async () => {
  const { orders } = await chain();
  let stoppedWithReason = 0;
  let stoppedWithout = 0;
  const explicitNone = new Map<number, number>();
  for (const o of allStates(orders)) {
    if (o.status === STATUS.REJECTED) assert.ok(o.reason !== undefined && o.reason > 0, `rejected ${o.id} has a reason`);
    else if (o.status === STATUS.STOPPED) {
      if (o.reason === undefined || o.reason === 0) stoppedWithout++;
      else stoppedWithReason++;
    } else {
      assert.ok(o.reason === undefined || o.reason === 0, `status ${o.status} must carry no error`);
      if (o.reason === 0) explicitNone.set(o.status, (explicitNone.get(o.status) ?? 0) + 1);
    }
  }
  assert.ok(stoppedWithReason > 0 && stoppedWithout > 0);
  // ORDER_ERROR_UNSPECIFIED set on purpose, which the original answers as no reason.
  assert.ok((explicitNone.get(STATUS.ACTIVE) ?? 0) > 50 && (explicitNone.get(STATUS.FILLED) ?? 0) > 20, JSON.stringify([...explicitNone]));
  const firsts = [...orders.values()].map((l) => l[0]!.order);
  assert.ok(firsts.filter((o) => o.reason === undefined).length > firsts.length * 0.8, 'most leave it out');
});

test('some orders that are not pegged carry a PeggedOrder with reference 0, and never park', async () => {
  const { orders } = await chain();
  let zeroOffset = 0;
  let otherOffset = 0;
  for (const list of orders.values()) {
    const first = list[0]!.order;
    if (first.peggedOrder?.reference !== 0) continue;
    if (first.peggedOrder.offset === '0') zeroOffset++;
    else otherOffset++;
    for (const { order: o } of list) {
      assert.deepEqual(o.peggedOrder, first.peggedOrder, `${o.id} keeps its empty peg`);
      assert.notEqual(o.status, STATUS.PARKED, `${o.id} is no pegged order`);
    }
  }
  assert.ok(zeroOffset > 50 && otherOffset > 20, `reference 0 with offset 0: ${zeroOffset}, with another offset: ${otherOffset}`);
});

test('times have nanosecond digits: createdAt, updatedAt, expiresAt', async () => {
  const { orders } = await chain();
  const states = allStates(orders);
  const share = (times: bigint[]) => times.filter((t) => t % 1000n !== 0n).length / times.length;
  const created = states.map((o) => o.createdAt);
  const updated = states.map((o) => o.updatedAt).filter((t) => t !== 0n);
  const expires = states.map((o) => o.expiresAt).filter((t) => t !== 0n);
  assert.ok(updated.length > 1000 && expires.length > 1000);
  for (const [name, times] of Object.entries({ created, updated, expires })) {
    assert.ok(share(times) > 0.99, `${name}: ${share(times)} off the microsecond`);
  }
});

test('orders of one block created in the same microsecond at other nanoseconds: the id, not the nanoseconds, orders them', async () => {
  const { orders } = await chain();
  // New orders by block, in creation order.
  const created = new Map<bigint, { id: string; createdAt: bigint; txHash: string }[]>();
  for (const list of orders.values()) {
    const { height, order, txHash } = list[0]!;
    created.set(height, [...(created.get(height) ?? []), { id: order.id, createdAt: order.createdAt, txHash }]);
  }
  let tiedPairs = 0;
  let idDisagrees = 0;
  for (const list of created.values()) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const [a, b] = [list[i]!, list[j]!];
        if (a.createdAt === b.createdAt || micros(a.createdAt) !== micros(b.createdAt)) continue;
        tiedPairs++;
        assert.notEqual(a.txHash, b.txHash, 'two transactions');
        const [earlier, later] = a.createdAt < b.createdAt ? [a, b] : [b, a];
        // Newest first by nanoseconds puts `later` first; by microseconds and id ascending, the smaller id.
        if (earlier.id < later.id) idDisagrees++;
      }
    }
  }
  assert.ok(tiedPairs > 100, `${tiedPairs} pairs`);
  assert.ok(idDisagrees > 30 && idDisagrees < tiedPairs, `${idDisagrees} of ${tiedPairs} pairs listed otherwise than by nanoseconds`);
});

test('several orders of one transaction share exactly one createdAt and one party', async () => {
  const { orders } = await chain();
  const byTx = new Map<string, Order[]>();
  for (const list of orders.values()) {
    const { order, txHash, height } = list[0]!;
    const key = `${height}/${txHash}`;
    byTx.set(key, [...(byTx.get(key) ?? []), order]);
  }
  const batches = [...byTx.values()].filter((os) => os.length > 1);
  assert.ok(batches.length > 50, `${batches.length} transactions creating several orders`);
  for (const os of batches) {
    assert.equal(new Set(os.map((o) => o.createdAt)).size, 1, 'one createdAt');
    assert.equal(new Set(os.map((o) => o.partyId)).size, 1, 'one party');
  }
  assert.ok(batches.some((os) => os.length >= 3));
});

test('each order keeps its identity, and its lifecycle is consistent', async () => {
  const { orders } = await chain();
  for (const [id, list] of orders) {
    const first = list[0]!.order;
    assert.equal(first.version, 1n, `${id} starts at version 1`);
    assert.equal(first.updatedAt, 0n, `${id} is new in its first event`);
    for (let i = 0; i < list.length; i++) {
      const { order: o, blockTime, nextBlockTime, height } = list[i]!;
      for (const k of ['marketId', 'partyId', 'side', 'type', 'timeInForce', 'createdAt', 'expiresAt', 'liquidityProvisionId', 'reference'] as const) {
        assert.equal(o[k], first[k], `${id} keeps its ${k}`);
      }
      assert.ok(o.size > 0n && o.size <= MAX_UINT64, `${id} size`);
      assert.ok(o.remaining >= 0n && o.remaining <= o.size, `${id} remaining within size`);
      assert.match(o.price, /^\d+$/);
      assert.ok(i === 0 || o.version >= list[i - 1]!.order.version, `${id} version never goes back`);
      assert.ok(i === list.length - 1 || !TERMINAL.includes(o.status), `${id}: nothing after a final status`);
      if (o.status === STATUS.FILLED) assert.equal(o.remaining + (o.icebergOrder?.reservedRemaining ?? 0n), 0n);
      if (o.status === STATUS.ACTIVE || o.status === STATUS.PARKED) assert.ok(o.remaining > 0n, `${id}: an open order has something left`);
      const ice = o.icebergOrder;
      if (ice !== undefined) {
        assert.ok(ice.minimumVisibleSize >= 1n && ice.minimumVisibleSize <= ice.peakSize, `${id} iceberg sizes`);
        assert.ok(o.remaining <= ice.peakSize && o.remaining + ice.reservedRemaining <= o.size, `${id} iceberg amounts`);
      }
      if (o.updatedAt !== 0n) {
        assert.ok(o.updatedAt >= blockTime && o.updatedAt < nextBlockTime, `${id} updated within its block`);
        assert.ok(o.updatedAt >= o.createdAt);
      }
      if (i === 0) assert.ok(o.createdAt >= blockTime && o.createdAt < nextBlockTime, `${id} created in its first block`);
      if (o.type === TYPE.MARKET) assert.ok(o.timeInForce === TIF.IOC || o.timeInForce === TIF.FOK);
      if (height !== list[0]!.height) assert.ok(o.timeInForce !== TIF.IOC && o.timeInForce !== TIF.FOK, `${id}: IOC/FOK orders end in their first block`);
    }
  }
});

test('immediate orders (IOC, FOK, market, network) end within their creation block', async () => {
  const { orders } = await chain();
  let n = 0;
  for (const list of orders.values()) {
    const o = last(list).order;
    if (o.timeInForce !== TIF.IOC && o.timeInForce !== TIF.FOK) continue;
    n++;
    assert.ok([STATUS.FILLED, STATUS.STOPPED, STATUS.PARTIALLY_FILLED, STATUS.REJECTED].includes(o.status as 5), `${o.id} status ${o.status}`);
    if (o.status === STATUS.PARTIALLY_FILLED) assert.ok(o.remaining > 0n && o.remaining < o.size && o.timeInForce === TIF.IOC);
  }
  assert.ok(n > 500);
});

test('lifecycles: amends, partial fills, parking and unparking, expiry, cancels', async () => {
  const { orders, blockTimes, events } = await chain();
  const names = new Map(events.flatMap((e) => (e.kind === 'beginBlock' ? [[e.height, e.block] as const] : [])));
  const blockHashOf = (height: bigint) => names.get(height);
  let amended = 0;
  let partiallyFilled = 0;
  let reactivated = 0;
  let expired = 0;
  let cancelled = 0;
  let spanning = 0;
  let icebergRefilled = 0;
  for (const list of orders.values()) {
    if (last(list).height > list[0]!.height) spanning++;
    let wasParked = false;
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!.order;
      const prev = list[i - 1]?.order;
      if (o.version > 1n) amended++;
      if (prev !== undefined && o.version === prev.version + 1n) {
        assert.ok(o.price !== prev.price || o.size !== prev.size || o.peggedOrder?.offset !== prev.peggedOrder?.offset, 'an amend changes something');
      }
      if (o.status === STATUS.ACTIVE && o.remaining > 0n && o.remaining < o.size && o.icebergOrder === undefined) partiallyFilled++;
      if (o.status === STATUS.PARKED) {
        wasParked = true;
        assert.ok(o.peggedOrder !== undefined, 'only pegged orders park');
      }
      if (wasParked && o.status === STATUS.ACTIVE) reactivated++;
      if (prev?.icebergOrder !== undefined && o.icebergOrder !== undefined && o.icebergOrder.reservedRemaining < prev.icebergOrder.reservedRemaining && o.status === STATUS.ACTIVE) icebergRefilled++;
    }
    const end = last(list);
    if (end.order.status === STATUS.EXPIRED) {
      expired++;
      const o = end.order;
      assert.equal(o.timeInForce, TIF.GTT);
      assert.ok(o.expiresAt > o.createdAt, 'expires after creation');
      assert.ok(end.blockTime >= o.expiresAt, 'expires once block time reaches expiresAt');
      assert.ok(o.expiresAt > blockTimes.get(end.height - 1n)!, 'in the first block at or after expiresAt');
      assert.equal(o.updatedAt, end.blockTime, 'as the block starts');
      assert.equal(end.txHash, blockHashOf(end.height), 'in no transaction: the block\'s own doing');
      assert.ok(end.height > list[0]!.height, 'in a later block');
    }
    if (end.order.status === STATUS.CANCELLED) cancelled++;
  }
  for (const [name, n] of Object.entries({ amended, partiallyFilled, reactivated, expired, cancelled, spanning, icebergRefilled })) {
    assert.ok(n > 10, `${name}: ${n}`);
  }
});

test('some orders have several events in one block (created then changed, the last one wins)', async () => {
  const { orders } = await chain();
  let sameBlock = 0;
  let amendedInCreationBlock = 0;
  for (const list of orders.values()) {
    const heights = list.map((e) => e.height);
    if (new Set(heights).size < heights.length) sameBlock++;
    if (list.some((e) => e.height === list[0]!.height && e.order.version === 2n)) amendedInCreationBlock++;
    // Within a block, events of one order come in stream order.
    for (let i = 1; i < list.length; i++) {
      if (list[i]!.height === list[i - 1]!.height) assert.ok(list[i]!.seqInBlock > list[i - 1]!.seqInBlock);
    }
  }
  assert.ok(sameBlock > 100, `${sameBlock} orders with several events in a block`);
  assert.ok(amendedInCreationBlock > 10, `${amendedInCreationBlock} amended in their creation block`);
});

test('64-bit sizes and prices beyond 2^53 occur and survive the file exactly', async () => {
  const { orders } = await chain();
  const states = allStates(orders);
  const hugeSizes = states.filter((o) => o.size > TWO_POW_53);
  const hugePrices = states.filter((o) => BigInt(o.price) > TWO_POW_53);
  assert.ok(hugeSizes.length > 50 && hugePrices.length > 50);
  assert.ok(hugeSizes.some((o) => o.size > 2n ** 63n), 'sizes above the int64 range');
  // Values a double cannot hold: a float anywhere on the way would change them.
  assert.ok(hugeSizes.some((o) => BigInt(Number(o.size)) !== o.size));
  assert.ok(hugePrices.some((o) => BigInt(Number(o.price)) !== BigInt(o.price)));
});

test('party activity is skewed: the busiest party has far more orders than the median one', async () => {
  const { orders } = await chain();
  const perParty = new Map<string, number>();
  for (const list of orders.values()) {
    const party = list[0]!.order.partyId;
    if (party === NETWORK_PARTY) continue;
    perParty.set(party, (perParty.get(party) ?? 0) + 1);
  }
  const counts = [...perParty.values()].sort((a, b) => b - a);
  const median = counts[Math.floor(counts.length / 2)]!;
  assert.ok(perParty.size > 1000, `${perParty.size} parties`);
  assert.ok(counts[0]! > 50 * median, `top ${counts[0]} vs median ${median}`);
  // ...and markets too.
  const perMarket = new Map<string, number>();
  for (const list of orders.values()) perMarket.set(list[0]!.order.marketId, (perMarket.get(list[0]!.order.marketId) ?? 0) + 1);
  const marketCounts = [...perMarket.values()].sort((a, b) => b - a);
  assert.ok(marketCounts[0]! > 4 * marketCounts[marketCounts.length - 1]!);
});

test('features do not depend on a lucky seed', () => {
  for (const seed of [1, 2, 3]) {
    const { orders } = indexOrders([...simulateEvents({ seed, blocks: 150, ordersPerBlock: 40 })]);
    const states = allStates(orders);
    const statuses = new Set(states.map((o) => o.status));
    assert.equal(statuses.size, 8, `seed ${seed}: every status`);
    assert.equal(new Set(states.map((o) => o.timeInForce)).size, 6, `seed ${seed}: every time in force`);
    assert.equal(new Set(states.map((o) => o.type)).size, 3, `seed ${seed}: every type`);
    assert.ok(states.some((o) => o.peggedOrder) && states.some((o) => o.icebergOrder) && states.some((o) => o.liquidityProvisionId));
  }
});
