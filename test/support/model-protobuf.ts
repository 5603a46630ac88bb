/**
 * The model's own protobuf reader: the wire format (varints, 64- and 32-bit
 * words, length-delimited bytes) and the few messages the model needs, by
 * the field numbers of proto/events.proto and docs/compatibility.md,
 * sections 9.3 to 9.5. Hand-written, not protobufjs and not
 * src/ingest/codec.ts or src/wire/: the model must read the events without
 * the code it checks, or a decoding mistake would be made on both sides and
 * never show.
 */
import type { ModelNodeSignature, ModelOrder, ModelSignerAdded, ModelSignerRemoved } from './model-types.js';

/** One field as it lies on the wire: a varint's value, or a length-delimited field's bytes. */
interface WireField {
  number: number;
  varint?: bigint;
  bytes?: Uint8Array;
}

/** Every field of a message, in wire order; fixed-width words are skipped (none of ours is one). */
function wireFields(buf: Uint8Array): WireField[] {
  const fields: WireField[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= buf.length) throw new Error('protobuf: a varint runs past the end');
      const byte = buf[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
      if (shift > 63n) throw new Error('protobuf: a varint longer than 10 bytes');
    }
  };
  while (at < buf.length) {
    const tag = varint();
    const number = Number(tag >> 3n);
    const wireType = Number(tag & 7n);
    if (wireType === 0) fields.push({ number, varint: varint() });
    else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else if (wireType === 2) {
      const length = Number(varint());
      if (at + length > buf.length) throw new Error('protobuf: a field runs past the end');
      fields.push({ number, bytes: buf.subarray(at, at + length) });
      at += length;
    } else throw new Error(`protobuf: wire type ${wireType} of field ${number}`);
  }
  if (at !== buf.length) throw new Error('protobuf: a fixed-width field runs past the end');
  return fields;
}

/**
 * A message's fields by number. A scalar given twice takes its last value,
 * and an embedded message given twice is the two merged, which is what its
 * bytes concatenated decode to: protobuf's own rules.
 */
class Message {
  private readonly byNumber = new Map<number, WireField[]>();

  constructor(bytes: Uint8Array) {
    for (const f of wireFields(bytes)) this.byNumber.set(f.number, [...(this.byNumber.get(f.number) ?? []), f]);
  }

  has(n: number): boolean {
    return this.byNumber.has(n);
  }

  private last(n: number): WireField | undefined {
    return this.byNumber.get(n)?.at(-1);
  }

  /** A varint as the 64 bits it carries; 0 when absent, as proto3 defaults it. */
  private bits(n: number): bigint {
    return this.last(n)?.varint ?? 0n;
  }

  uint64(n: number): bigint {
    return BigInt.asUintN(64, this.bits(n));
  }

  int64(n: number): bigint {
    return BigInt.asIntN(64, this.bits(n));
  }

  /** int32 (every enum): a negative value is sent sign-extended to 64 bits. */
  int32(n: number): number {
    return Number(BigInt.asIntN(32, this.bits(n)));
  }

  bool(n: number): boolean {
    return this.bits(n) !== 0n;
  }

  bytes(n: number): Uint8Array {
    return this.last(n)?.bytes ?? new Uint8Array(0);
  }

  string(n: number): string {
    return Buffer.from(this.bytes(n)).toString('utf8');
  }

  message(n: number): Message | undefined {
    const all = this.byNumber.get(n);
    return all === undefined ? undefined : new Message(Buffer.concat(all.map((f) => f.bytes ?? new Uint8Array(0))));
  }

  /** Each occurrence of a repeated message field. */
  messages(n: number): Message[] {
    return (this.byNumber.get(n) ?? []).map((f) => new Message(f.bytes ?? new Uint8Array(0)));
  }
}

function order(m: Message): ModelOrder {
  const o: ModelOrder = {
    id: m.string(1), marketId: m.string(2), partyId: m.string(3), side: m.int32(4), price: m.string(5),
    size: m.uint64(6), remaining: m.uint64(7), timeInForce: m.int32(8), type: m.int32(9), createdAt: m.int64(10),
    status: m.int32(11), expiresAt: m.int64(12), reference: m.string(13), updatedAt: m.int64(15), version: m.uint64(16),
    batchId: m.uint64(17), liquidityProvisionId: m.string(19), postOnly: m.bool(20), reduceOnly: m.bool(21),
  };
  // `optional` fields and message fields are there only when the event carries them.
  if (m.has(14)) o.reason = m.int32(14);
  const pegged = m.message(18);
  if (pegged !== undefined) o.peggedOrder = { reference: pegged.int32(1), offset: pegged.string(2) };
  const iceberg = m.message(22);
  if (iceberg !== undefined) {
    o.icebergOrder = { peakSize: iceberg.uint64(1), minimumVisibleSize: iceberg.uint64(2), reservedRemaining: iceberg.uint64(3) };
  }
  return o;
}

/** A BusEvent as the model reads it: its envelope and the one member of its oneof the model uses, if any. */
export type ModelEvent = { id: string; block: string; chainId: string } & (
  | { kind: 'beginBlock'; height: bigint; time: bigint; hash: string }
  | { kind: 'endBlock'; height: bigint }
  | { kind: 'order'; order: ModelOrder }
  | { kind: 'nodeSignature'; nodeSignature: ModelNodeSignature }
  | { kind: 'signerAdded'; signerAdded: ModelSignerAdded }
  | { kind: 'signerRemoved'; signerRemoved: ModelSignerRemoved }
  | { kind: 'other' }
);

/** Decodes one BusEvent (section 9.3): which kind it is, by the member of the oneof it carries. */
export function decodeEvent(bytes: Uint8Array): ModelEvent {
  const e = new Message(bytes);
  const envelope = { id: e.string(1), block: e.string(2), chainId: e.string(5) };
  const begin = e.message(148);
  if (begin) return { ...envelope, kind: 'beginBlock', height: begin.uint64(1), time: begin.int64(2), hash: begin.string(3) };
  const end = e.message(149);
  if (end) return { ...envelope, kind: 'endBlock', height: end.uint64(1) };
  const o = e.message(104);
  if (o) return { ...envelope, kind: 'order', order: order(o) };
  const sig = e.message(112);
  if (sig) return { ...envelope, kind: 'nodeSignature', nodeSignature: { id: sig.string(1), sig: sig.bytes(2), kind: sig.int32(3) } };
  const added = e.message(143);
  if (added) {
    return {
      ...envelope, kind: 'signerAdded', signerAdded: {
        signatureId: added.string(1), validatorId: added.string(2), timestamp: added.int64(3), newSigner: added.string(4),
        submitter: added.string(5), nonce: added.string(6), epochSeq: BigInt(added.string(7) || '0'),
      },
    };
  }
  const removed = e.message(144);
  if (removed) {
    return {
      ...envelope, kind: 'signerRemoved', signerRemoved: {
        signatureSubmitters: removed.messages(1).map((s) => ({ signatureId: s.string(1), submitter: s.string(2) })),
        validatorId: removed.string(2), timestamp: removed.int64(3), oldSigner: removed.string(4), nonce: removed.string(5),
        epochSeq: BigInt(removed.string(6) || '0'),
      },
    };
  }
  return { ...envelope, kind: 'other' };
}
