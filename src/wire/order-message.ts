/**
 * The network's protobuf messages (our own subset, proto/events.proto), and
 * the Order message <-> the domain Order. Shared by ingestion, which decodes
 * BusEvents, and the store, whose order history keeps each Order message as
 * the network encoded it.
 */
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Order } from '../domain/order.js';

const protoPath = fileURLToPath(new URL('../../../proto/events.proto', import.meta.url));
const root = protobuf.loadSync(protoPath);
export const BusEventMessage = root.lookupType('ledgerquery.BusEvent');
const OrderMessage = root.lookupType('ledgerquery.Order');
const ORDER_FIELD = BusEventMessage.fields.order!.id;

export interface LongBits {
  low: number;
  high: number;
  unsigned: boolean;
}
export type Int64 = LongBits | number | string | null | undefined;

/** protobufjs hands 64-bit fields over as Long (or 0 when unset); we want exact bigints. */
export function big(v: Int64, unsigned: boolean): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'number' || typeof v === 'string') return BigInt(v);
  const high = unsigned ? v.high >>> 0 : v.high;
  // Below 2^53 in magnitude (nearly every value) one double holds it exactly: one conversion, not four.
  if (high < 0x200000 && high >= -0x200000) return BigInt(high * 0x100000000 + (v.low >>> 0));
  return (BigInt(high) << 32n) + BigInt(v.low >>> 0);
}

/**
 * 64-bit values go to protobufjs as Long-shaped bits: handing it decimal
 * strings costs a Long.fromString per field, which dominated encoding.
 */
export const s64 = (v: bigint): LongBits => ({
  low: Number(BigInt.asIntN(32, v)),
  high: Number(BigInt.asIntN(32, v >> 32n)),
  unsigned: false,
});

/** Shape of a decoded protobufjs Order; only the fields we read. */
export interface RawOrder {
  id: string; marketId: string; partyId: string; side: number; price: string;
  size: Int64; remaining: Int64; timeInForce: number; type: number; createdAt: Int64;
  status: number; expiresAt: Int64; reference: string; reason?: number; updatedAt: Int64;
  version: Int64; batchId: Int64; peggedOrder: { reference: number; offset: string } | null;
  liquidityProvisionId: string; postOnly: boolean; reduceOnly: boolean;
  icebergOrder: { peakSize: Int64; minimumVisibleSize: Int64; reservedRemaining: Int64 } | null;
}

export function orderFromRaw(o: RawOrder): Order {
  const order: Order = {
    id: o.id, marketId: o.marketId, partyId: o.partyId, side: o.side, price: o.price,
    size: big(o.size, true), remaining: big(o.remaining, true), timeInForce: o.timeInForce,
    type: o.type, createdAt: big(o.createdAt, false), status: o.status,
    expiresAt: big(o.expiresAt, false), reference: o.reference,
    updatedAt: big(o.updatedAt, false), version: big(o.version, true),
    batchId: big(o.batchId, true), liquidityProvisionId: o.liquidityProvisionId,
    postOnly: o.postOnly, reduceOnly: o.reduceOnly,
  };
  if (Object.prototype.hasOwnProperty.call(o, 'reason')) order.reason = o.reason!;
  if (o.peggedOrder) order.peggedOrder = { reference: o.peggedOrder.reference, offset: o.peggedOrder.offset };
  if (o.icebergOrder) {
    order.icebergOrder = {
      peakSize: big(o.icebergOrder.peakSize, true),
      minimumVisibleSize: big(o.icebergOrder.minimumVisibleSize, true),
      reservedRemaining: big(o.icebergOrder.reservedRemaining, true),
    };
  }
  return order;
}

/** The Order as protobufjs takes it for encoding. */
export function rawFromOrder(o: Order): Record<string, unknown> {
  return {
    ...o,
    size: s64(o.size), remaining: s64(o.remaining), createdAt: s64(o.createdAt),
    expiresAt: s64(o.expiresAt), updatedAt: s64(o.updatedAt), version: s64(o.version),
    batchId: s64(o.batchId),
    icebergOrder: o.icebergOrder && {
      peakSize: s64(o.icebergOrder.peakSize),
      minimumVisibleSize: s64(o.icebergOrder.minimumVisibleSize),
      reservedRemaining: s64(o.icebergOrder.reservedRemaining),
    },
  };
}

/** The Order message of an order state (for sources that did not carry one, such as NDJSON). */
export function encodeOrder(o: Order): Uint8Array {
  return OrderMessage.encode(rawFromOrder(o)).finish();
}

/** An Order message back to the order state. */
export function decodeOrder(bytes: Uint8Array): Order {
  return orderFromRaw(OrderMessage.decode(bytes) as unknown as RawOrder);
}

/**
 * The bytes of the Order message inside an encoded BusEvent, without copying;
 * undefined unless it holds exactly one (protobuf merges repeated occurrences
 * of a message field, so no single slice would be the order). protobufjs
 * decodes a message but does not say where its parts were, so the top-level
 * fields are walked with its Reader.
 */
export function orderMessageOf(busEvent: Uint8Array): Uint8Array | undefined {
  const reader = protobuf.Reader.create(busEvent);
  let found: Uint8Array | undefined;
  let occurrences = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === ORDER_FIELD && (tag & 7) === 2) {
      const length = reader.uint32();
      found = busEvent.subarray(reader.pos, reader.pos + length);
      occurrences++;
      reader.pos += length;
    } else {
      reader.skipType(tag & 7);
    }
  }
  return occurrences === 1 ? found : undefined;
}

const VERSION_FIELD = OrderMessage.fields.version!.id;

/**
 * The `version` (field 16, uint64) of an Order message, or of what a history
 * row keeps of one (../store/history-message.ts leaves out whole leading
 * fields, so the rest still reads as a message); 0 when absent, as protobuf
 * reads it. Reads the top-level fields with protobufjs's Reader, decoding
 * nothing else: a migration reads it from every stored row.
 * Throws where the bytes are not a message.
 */
export function orderVersionOf(message: Uint8Array): bigint {
  const reader = protobuf.Reader.create(message);
  let version = 0n;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    // A scalar given twice: the last one counts.
    if (tag >>> 3 === VERSION_FIELD && (tag & 7) === 0) version = big(reader.uint64() as unknown as LongBits, true);
    else reader.skipType(tag & 7);
  }
  return version;
}
