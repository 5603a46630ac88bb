/**
 * A hand-written encoder for Order BusEvents, the simulator's hot path.
 *
 * encodeBusEvent (src/ingest/codec.ts) routes every 64-bit field through a
 * decimal string and Long.fromString, which made writing a million-order file
 * take most of a minute. This writes the same bytes directly; a test checks
 * it is byte-identical to encodeBusEvent on every order event of a simulated
 * chain and on edge cases. The rules it mirrors (those of the protobufjs
 * encoder over proto/events.proto, as encodeBusEvent calls it): fields in
 * field-number order; proto3 strings, bools and 32-bit numbers left out when
 * they hold their zero value; 64-bit fields (handed over as strings) always
 * written; `optional` fields and sub-messages written whenever present.
 */
import type { Order } from '../domain/order.js';
import type { EventHeader } from '../ingest/events.js';

const WIRE_VARINT = 0;
const WIRE_LENGTH = 2;
const words64 = new BigUint64Array(1);
const words32 = new Uint32Array(words64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LOW = LITTLE_ENDIAN ? 0 : 1;
const HIGH = LITTLE_ENDIAN ? 1 : 0;

class ProtoWriter {
  buf = Buffer.allocUnsafe(1024);
  pos = 0;

  reset(): void {
    this.pos = 0;
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + extra));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** A varint of a non-negative integer below 2^53. */
  varint(n: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (n > 0x7f) {
      buf[pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[pos++] = n;
    this.pos = pos;
  }

  /** A varint of a 64-bit value, negative ones as their two's complement. */
  varint64(v: bigint): void {
    // Storing into a BigUint64Array reduces mod 2^64 and splits into 32-bit
    // halves without bigint arithmetic, which dominated the encoder.
    words64[0] = v;
    let lo = words32[LOW] as number;
    let hi = words32[HIGH] as number;
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (hi !== 0) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 0x7f) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    buf[pos++] = lo;
    this.pos = pos;
  }

  /** A 32-bit signed value the protobuf way: negatives take ten bytes. */
  int32(field: number, n: number): void {
    if (n === 0) return;
    this.varint((field << 3) | WIRE_VARINT);
    if (n >= 0) this.varint(n);
    else this.varint64(BigInt(n));
  }

  int32Present(field: number, n: number): void {
    this.varint((field << 3) | WIRE_VARINT);
    if (n >= 0) this.varint(n);
    else this.varint64(BigInt(n));
  }

  int64(field: number, v: bigint): void {
    this.varint((field << 3) | WIRE_VARINT);
    this.varint64(v);
  }

  bool(field: number, b: boolean): void {
    if (!b) return;
    this.varint((field << 3) | WIRE_VARINT);
    this.varint(1);
  }

  string(field: number, s: string): void {
    if (s === '') return;
    this.varint((field << 3) | WIRE_LENGTH);
    // Room for the longest UTF-8 form and the longest length prefix, so
    // nothing below reallocates.
    this.ensure(3 * s.length + 10);
    // Write first, then the length in front: nearly every string here is
    // short, so its length takes one byte; a longer one is shifted along.
    const buf = this.buf;
    const start = this.pos;
    const length = buf.write(s, start + 1, 'utf8');
    if (length < 0x80) {
      buf[start] = length;
      this.pos = start + 1 + length;
      return;
    }
    let prefix = 0;
    for (let n = length; n > 0; n = Math.floor(n / 0x80)) prefix++;
    buf.copyWithin(start + prefix, start + 1, start + 1 + length);
    let pos = start;
    let n = length;
    while (n > 0x7f) {
      buf[pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[pos++] = n;
    this.pos = pos + length;
  }

  bytes(field: number, src: Uint8Array, start: number, end: number): void {
    this.varint((field << 3) | WIRE_LENGTH);
    this.varint(end - start);
    this.ensure(end - start);
    this.buf.set(src.subarray(start, end), this.pos);
    this.pos += end - start;
  }
}

const body = new ProtoWriter();
const nested = new ProtoWriter();
const event = new ProtoWriter();

function writeOrder(w: ProtoWriter, o: Order): void {
  w.string(1, o.id);
  w.string(2, o.marketId);
  w.string(3, o.partyId);
  w.int32(4, o.side);
  w.string(5, o.price);
  w.int64(6, o.size);
  w.int64(7, o.remaining);
  w.int32(8, o.timeInForce);
  w.int32(9, o.type);
  w.int64(10, o.createdAt);
  w.int32(11, o.status);
  w.int64(12, o.expiresAt);
  w.string(13, o.reference);
  if (o.reason !== undefined && o.reason !== null) w.int32Present(14, o.reason);
  w.int64(15, o.updatedAt);
  w.int64(16, o.version);
  w.int64(17, o.batchId);
  if (o.peggedOrder !== undefined && o.peggedOrder !== null) {
    nested.reset();
    nested.int32(1, o.peggedOrder.reference);
    nested.string(2, o.peggedOrder.offset);
    w.bytes(18, nested.buf, 0, nested.pos);
  }
  w.string(19, o.liquidityProvisionId);
  w.bool(20, o.postOnly);
  w.bool(21, o.reduceOnly);
  if (o.icebergOrder !== undefined && o.icebergOrder !== null) {
    nested.reset();
    nested.int64(1, o.icebergOrder.peakSize);
    nested.int64(2, o.icebergOrder.minimumVisibleSize);
    nested.int64(3, o.icebergOrder.reservedRemaining);
    w.bytes(22, nested.buf, 0, nested.pos);
  }
}

/**
 * The BusEvent bytes of an order event, exactly as encodeBusEvent writes them.
 * The result is a view of a reused buffer, valid only until the next call:
 * copy it (encodeRecord does) before encoding the next event.
 */
export function encodeOrderEventView(e: EventHeader & { order: Order }): Uint8Array {
  body.reset();
  writeOrder(body, e.order);
  event.reset();
  event.string(1, e.id);
  event.string(2, e.block);
  event.int32(3, e.type);
  event.string(5, e.chainId);
  event.bytes(104, body.buf, 0, body.pos);
  return event.buf.subarray(0, event.pos);
}
