/** Hand-built event streams for ingestion tests. */
import assert from 'node:assert/strict';
import type { Order } from '../../src/domain/order.js';
import { decodeOrder } from '../../src/wire/order-message.js';
import { busEventTypeOf, encodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent, EventBody } from '../../src/ingest/events.js';
import { encodeRecord } from '../../src/ingest/framing.js';

export const CHAIN = 'test-chain';
export const hex = (n: number, width = 64) => n.toString(16).padStart(width, '0');
export const blockTime = (h: bigint) => 1_700_000_000_000_000_000n + h * 1_000_000_000n;

export function order(n: number, over: Partial<Order> = {}): Order {
  return {
    id: hex(n), marketId: hex(1000 + (n % 3)), partyId: hex(2000 + (n % 5)), side: 1, price: '100',
    size: 10n, remaining: 10n, timeInForce: 1, type: 1, createdAt: blockTime(1n) + BigInt(n),
    status: 1, expiresAt: 0n, reference: '', updatedAt: 0n, version: 1n, batchId: 0n,
    liquidityProvisionId: '', postOnly: false, reduceOnly: false, ...over,
  };
}

/**
 * A decoded event without the Order message that decoding attaches to order
 * events, so that it compares equal to the event that was encoded. The message
 * is checked on the way: it must decode to the very order of the event.
 */
export function withoutMessage(e: BusEvent): BusEvent {
  if (e.kind !== 'order') return e;
  const { encoded, ...rest } = e;
  assert.ok(encoded, `order event ${e.id} decoded without its Order message`);
  assert.deepEqual(decodeOrder(encoded), e.order, `the Order message of event ${e.id}`);
  return rest;
}

/** The hash of test block `height` (lower case, as BeginBlock carries it); `variant` makes another block of that height. */
export const blockHash = (height: bigint, variant = 0) => hex(Number(height) + variant * 0x1000000, 64);

/**
 * The events of one whole block around `bodies`, as the core emits them: each
 * names the block by its hash in upper case, ids count from "H-1" (the BeginBlock).
 */
export function blockEvents(height: bigint, bodies: EventBody[], chainId = CHAIN, hash = blockHash(height)): BusEvent[] {
  const all: EventBody[] = [
    { kind: 'beginBlock', height, timestamp: blockTime(height), hash },
    ...bodies,
    { kind: 'endBlock', height },
  ];
  return all.map((b, i) => ({
    id: `${height}-${i + 1}`, block: hash.toUpperCase(), chainId,
    type: b.kind === 'other' ? 11 : busEventTypeOf(b.kind), ...b,
  }));
}

/** Frames events as an event file, sequence numbers from `firstSeq`. */
export function eventFile(events: BusEvent[], firstSeq = 1n): Buffer {
  return Buffer.concat(events.map((e, i) => encodeRecord(firstSeq + BigInt(i), encodeBusEvent(e))));
}
