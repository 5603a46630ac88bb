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
