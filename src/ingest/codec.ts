/**
 * BusEvent protobuf <-> the event types of ./events.ts, using protobufjs over
 * our own schema subset (proto/events.proto).
 */
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { BusEvent, EventBody } from './events.js';
import { BusEventType } from './event-types.js';

const protoPath = fileURLToPath(new URL('../../../proto/events.proto', import.meta.url));
const root = protobuf.loadSync(protoPath);
const BusEventMessage = root.lookupType('ledgerquery.BusEvent');

interface LongBits {
  low: number;
  high: number;
  unsigned: boolean;
}
type Int64 = LongBits | number | string | null | undefined;

/** protobufjs hands 64-bit fields over as Long (or 0 when unset); we want exact bigints. */
function big(v: Int64, unsigned: boolean): bigint {
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'number' || typeof v === 'string') return BigInt(v);
  const high = unsigned ? v.high >>> 0 : v.high;
  // Below 2^53 in magnitude (nearly every value) one double holds it exactly: one conversion, not four.
  if (high < 0x200000 && high >= -0x200000) return BigInt(high * 0x100000000 + (v.low >>> 0));
  return (BigInt(high) << 32n) + BigInt(v.low >>> 0);
}

/** Shape of the decoded protobufjs message; only the fields we read. */
interface RawOrder {
  id: string; marketId: string; partyId: string; side: number; price: string;
  size: Int64; remaining: Int64; timeInForce: number; type: number; createdAt: Int64;
  status: number; expiresAt: Int64; reference: string; reason?: number; updatedAt: Int64;
  version: Int64; batchId: Int64; peggedOrder: { reference: number; offset: string } | null;
  liquidityProvisionId: string; postOnly: boolean; reduceOnly: boolean;
  icebergOrder: { peakSize: Int64; minimumVisibleSize: Int64; reservedRemaining: Int64 } | null;
}
interface RawEvent {
  id: string; block: string; type: number; chainId: string;
  event?: string;
  timeUpdate?: { timestamp: Int64 };
  order?: RawOrder;
  nodeSignature?: { id: string; sig: Uint8Array; kind: number };
  erc20MultisigSignerAdded?: {
    signatureId: string; validatorId: string; timestamp: Int64; newSigner: string;
    submitter: string; nonce: string; epochSeq: string;
  };
  erc20MultisigSignerRemoved?: {
    signatureSubmitters: { signatureId: string; submitter: string }[];
    validatorId: string; timestamp: Int64; oldSigner: string; nonce: string; epochSeq: string;
  };
  beginBlock?: { height: Int64; timestamp: Int64; hash: string };
  endBlock?: { height: Int64 };
}

export class DecodeError extends Error {}

/** epoch_seq travels as a string holding a base-10 integer. */
export function parseEpochSeq(s: string): bigint {
  if (!/^\d{1,20}$/.test(s)) throw new DecodeError(`epoch_seq ${JSON.stringify(s)} is not a base-10 integer`);
  return BigInt(s);
}

function body(m: RawEvent): EventBody {
  switch (m.event) {
    case 'beginBlock': {
      const b = m.beginBlock!;
      return { kind: 'beginBlock', height: big(b.height, true), timestamp: big(b.timestamp, false), hash: b.hash };
    }
    case 'endBlock':
      return { kind: 'endBlock', height: big(m.endBlock!.height, true) };
    case 'timeUpdate':
      return { kind: 'timeUpdate', timestamp: big(m.timeUpdate!.timestamp, false) };
    case 'order': {
      const o = m.order!;
      const order: import('../domain/order.js').Order = {
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
      return { kind: 'order', order };
    }
    case 'nodeSignature': {
      const s = m.nodeSignature!;
      return { kind: 'nodeSignature', nodeSignature: { id: s.id, sig: s.sig, kind: s.kind } };
    }
    case 'erc20MultisigSignerAdded': {
      const a = m.erc20MultisigSignerAdded!;
      return {
        kind: 'signerAdded',
        signerAdded: {
          signatureId: a.signatureId, validatorId: a.validatorId, timestamp: big(a.timestamp, false),
          newSigner: a.newSigner, submitter: a.submitter, nonce: a.nonce, epochSeq: parseEpochSeq(a.epochSeq),
        },
      };
    }
    case 'erc20MultisigSignerRemoved': {
      const r = m.erc20MultisigSignerRemoved!;
      return {
        kind: 'signerRemoved',
        signerRemoved: {
          signatureSubmitters: r.signatureSubmitters.map((s) => ({ signatureId: s.signatureId, submitter: s.submitter })),
          validatorId: r.validatorId, timestamp: big(r.timestamp, false), oldSigner: r.oldSigner,
          nonce: r.nonce, epochSeq: parseEpochSeq(r.epochSeq),
        },
      };
    }
    default:
      return { kind: 'other' };
  }
}

/** Decodes one BusEvent. Throws DecodeError on bytes that are not one. */
export function decodeBusEvent(bytes: Uint8Array): BusEvent {
  let m: RawEvent;
  try {
    m = BusEventMessage.decode(bytes) as unknown as RawEvent;
  } catch (e) {
    throw new DecodeError(`not a BusEvent: ${(e as Error).message}`);
  }
  const event = body(m) as BusEvent;
  event.id = m.id;
  event.block = m.block;
  event.type = m.type;
  event.chainId = m.chainId;
  return event;
}

const typeOfKind: Record<Exclude<EventBody['kind'], 'other'>, number> = {
  beginBlock: BusEventType.BEGIN_BLOCK,
  endBlock: BusEventType.END_BLOCK,
  timeUpdate: BusEventType.TIME_UPDATE,
  order: BusEventType.ORDER,
  nodeSignature: BusEventType.NODE_SIGNATURE,
  signerAdded: BusEventType.ERC20_MULTI_SIG_SIGNER_ADDED,
  signerRemoved: BusEventType.ERC20_MULTI_SIG_SIGNER_REMOVED,
};

/** The BusEventType number that belongs with an event body. */
export function busEventTypeOf(kind: EventBody['kind']): number {
  return kind === 'other' ? 0 : typeOfKind[kind];
}

/**
 * 64-bit values go to protobufjs as Long-shaped bits: handing it decimal
 * strings costs a Long.fromString per field, which dominated encoding.
 */
const s64 = (v: bigint): LongBits => ({
  low: Number(BigInt.asIntN(32, v)),
  high: Number(BigInt.asIntN(32, v >> 32n)),
  unsigned: false,
});

/** Encodes an event the way the network's core does (used by the simulator and tests). */
export function encodeBusEvent(e: BusEvent): Uint8Array {
  const msg: Record<string, unknown> = { id: e.id, block: e.block, type: e.type, chainId: e.chainId };
  switch (e.kind) {
    case 'beginBlock':
      msg.beginBlock = { height: s64(e.height), timestamp: s64(e.timestamp), hash: e.hash };
      break;
    case 'endBlock':
      msg.endBlock = { height: s64(e.height) };
      break;
    case 'timeUpdate':
      msg.timeUpdate = { timestamp: s64(e.timestamp) };
      break;
    case 'order': {
      const o = e.order;
      msg.order = {
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
      break;
    }
    case 'nodeSignature':
      msg.nodeSignature = e.nodeSignature;
      break;
    case 'signerAdded':
      msg.erc20MultisigSignerAdded = {
        ...e.signerAdded, timestamp: s64(e.signerAdded.timestamp), epochSeq: String(e.signerAdded.epochSeq),
      };
      break;
    case 'signerRemoved':
      msg.erc20MultisigSignerRemoved = {
        ...e.signerRemoved, timestamp: s64(e.signerRemoved.timestamp), epochSeq: String(e.signerRemoved.epochSeq),
      };
      break;
    case 'other':
      break;
  }
  return BusEventMessage.encode(msg).finish();
}
