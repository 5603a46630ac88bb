import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Order } from '../../src/domain/order.js';
import { decodeBusEvent, encodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { encodeOrderEventView } from '../../src/simulate/order-encoder.js';
import { simulateEvents } from '../../src/simulate/simulate.js';

type OrderEvent = Extract<BusEvent, { kind: 'order' }>;

function sameBytes(e: OrderEvent): void {
  const expected = Buffer.from(encodeBusEvent(e));
  const actual = Buffer.from(encodeOrderEventView(e));
  assert.equal(actual.toString('hex'), expected.toString('hex'), `event ${e.id}`);
}

const base: Order = {
  id: 'a'.repeat(64), marketId: 'b'.repeat(64), partyId: 'network', side: 1, price: '100',
  size: 10n, remaining: 10n, timeInForce: 1, type: 1, createdAt: 1_700_000_000_000_000_000n, status: 1,
  expiresAt: 0n, reference: '', updatedAt: 0n, version: 1n, batchId: 0n, liquidityProvisionId: '',
  postOnly: false, reduceOnly: false,
};

function event(order: Order, header: Partial<OrderEvent> = {}): OrderEvent {
  return { id: '1-2', block: '1', type: 5, chainId: 'c', kind: 'order', order, ...header };
}

test('writes exactly the bytes of encodeBusEvent for every order event of a simulated chain', () => {
  let n = 0;
  for (const e of simulateEvents({ seed: 11, blocks: 120, ordersPerBlock: 40 })) {
    if (e.kind !== 'order') continue;
    sameBytes(e);
    n++;
  }
  assert.ok(n > 5000);
});

test('matches encodeBusEvent on edge cases: zeros, limits, negatives, long and non-ASCII strings', () => {
  const cases: Order[] = [
    base,
    { ...base, side: 0, timeInForce: 0, type: 0, status: 0, price: '', size: 0n, remaining: 0n, createdAt: 0n, version: 0n },
    { ...base, size: 2n ** 64n - 1n, remaining: 2n ** 63n, batchId: 2n ** 53n, version: 2n ** 53n - 1n, expiresAt: 2n ** 63n - 1n },
    { ...base, createdAt: -1n, expiresAt: -(2n ** 63n), updatedAt: -123456789n },
    { ...base, reason: 0 },
    { ...base, reason: 50, status: 4 },
    { ...base, reference: 'ref-é-€-😀'.repeat(20), price: '9'.repeat(200) },
    { ...base, reference: 'x'.repeat(127) },
    { ...base, reference: 'x'.repeat(128) },
    { ...base, reference: 'é'.repeat(63) + 'x' },
    { ...base, reference: 'é'.repeat(64) },
    { ...base, reference: 'y'.repeat(20_000) },
    { ...base, peggedOrder: { reference: 0, offset: '' } },
    { ...base, peggedOrder: { reference: 3, offset: '123456789012345678901234567890' } },
    { ...base, icebergOrder: { peakSize: 0n, minimumVisibleSize: 0n, reservedRemaining: 0n } },
    { ...base, icebergOrder: { peakSize: 2n ** 64n - 1n, minimumVisibleSize: 1n, reservedRemaining: 2n ** 40n } },
    { ...base, postOnly: true, reduceOnly: true, liquidityProvisionId: 'c'.repeat(64) },
    { ...base, side: -1, status: -2147483648 },
  ];
  for (const order of cases) sameBytes(event(order));
  sameBytes(event(base, { id: '', block: '', chainId: '', type: 0 }));
  sameBytes(event(base, { id: '18446744073709551615-99999', block: '18446744073709551615', chainId: 'chain-é' }));
});

test('the result decodes back to the event', () => {
  const order: Order = { ...base, size: 2n ** 64n - 1n, reason: 47, peggedOrder: { reference: 1, offset: '5' } };
  assert.deepStrictEqual(decodeBusEvent(encodeOrderEventView(event(order))), event(order));
});
