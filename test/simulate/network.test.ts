import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STATUS } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { OrderNetwork } from '../../src/simulate/network.js';
import { Random } from '../../src/simulate/random.js';

const START = 1_704_067_200_000_000_000n;
const INTERVAL = 1_000_000_000n;

test('live orders stay bounded: memory follows open orders, not all orders ever made', () => {
  const perBlock = 20;
  const net = new OrderNetwork(new Random(9), { ordersPerBlock: perBlock, startTime: START, blockIntervalNs: INTERVAL });
  const out: Order[] = [];
  const lastState = new Map<string, number>();
  const liveAt: number[] = [];
  for (let i = 0; i < 1500; i++) {
    out.length = 0;
    net.runBlock(i, out);
    for (const o of out) lastState.set(o.id, o.status);
    if ((i + 1) % 500 === 0) liveAt.push(net.liveOrders);
  }
  // The network's own count agrees with the stream: orders whose last state is open.
  const open = [...lastState.values()].filter((s) => s === STATUS.ACTIVE || s === STATUS.PARKED).length;
  assert.equal(net.liveOrders, open);
  assert.equal(net.ordersCreated, lastState.size);
  assert.ok(net.ordersCreated > 1500 * perBlock * 0.9);
  const [a, b, c] = liveAt as [number, number, number];
  assert.ok(a > 0 && c < 1.5 * a && b < 1.5 * a, `live orders at 500/1000/1500 blocks: ${liveAt.join('/')}`);
  assert.ok(c < 40 * perBlock, `${c} live orders for ${perBlock} new per block`);
});

test('the same seed runs the same network', () => {
  const run = (seed: number): Order[] => {
    const net = new OrderNetwork(new Random(seed), { ordersPerBlock: 10, startTime: START, blockIntervalNs: INTERVAL });
    const out: Order[] = [];
    for (let i = 0; i < 30; i++) net.runBlock(i, out);
    return out;
  };
  assert.deepStrictEqual(run(4), run(4));
  assert.notDeepStrictEqual(run(4), run(5));
});

test('each event is marked with its transaction: block-level ones 0, the rest numbered, each transaction\'s events together', () => {
  const net = new OrderNetwork(new Random(6), { ordersPerBlock: 30, startTime: START, blockIntervalNs: INTERVAL });
  let expiries = 0;
  let shared = 0;
  for (let i = 0; i < 300; i++) {
    const out: Order[] = [];
    const txOf: number[] = [];
    net.runBlock(i, out, txOf);
    assert.equal(txOf.length, out.length, 'one mark per event');
    let last = 0;
    txOf.forEach((tx, k) => {
      assert.ok(tx >= last, `block ${i}: transaction ${tx} after ${last}`);
      if (k > 0 && tx === txOf[k - 1] && tx > 0) shared++;
      last = tx;
      const o = out[k]!;
      if (o.status === STATUS.EXPIRED) {
        expiries++;
        assert.equal(tx, 0, 'expiry is the block\'s doing');
      }
    });
  }
  assert.ok(expiries > 20 && shared > 100, `${expiries} expiries, ${shared} events sharing a transaction`);
});
