/**
 * BusEvent protobuf <-> the event types of ./events.ts, using protobufjs over
 * our own schema subset (proto/events.proto).
 */
import { CorruptInputError } from '../errors.js';
import type { BusEvent, EventBody } from './events.js';
import { BusEventType } from './event-types.js';
import { isOrderId, type Order } from '../domain/order.js';
import {
  BusEventMessage, big, encodeOrder, orderFromRaw, orderMessageOf, rawFromOrder, s64, type Int64, type RawOrder,
} from '../wire/order-message.js';

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

/** epoch_seq travels as a string holding a base-10 integer. */
export function parseEpochSeq(s: string): bigint {
  if (!/^\d{1,20}$/.test(s)) throw new CorruptInputError(`epoch_seq ${JSON.stringify(s)} is not a base-10 integer`);
  return BigInt(s);
}

/** The store keys orders by their id's bytes: an order whose id has none is refused, as the original refuses it. */
export function checkedOrder(order: Order): Order {
  if (!isOrderId(order.id)) throw new CorruptInputError(`order id ${JSON.stringify(order.id)} is not 64 hex digits`);
  return order;
}

function body(m: RawEvent, bytes: Uint8Array): EventBody {
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
      const order = checkedOrder(orderFromRaw(m.order!));
      return { kind: 'order', order, encoded: orderMessageOf(bytes) ?? encodeOrder(order) };
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

/** Decodes one BusEvent. Throws CorruptInputError on bytes that are not one. */
export function decodeBusEvent(bytes: Uint8Array): BusEvent {
  let m: RawEvent;
  try {
    m = BusEventMessage.decode(bytes) as unknown as RawEvent;
  } catch (e) {
    throw new CorruptInputError(`not a BusEvent: ${(e as Error).message}`);
  }
  const event = body(m, bytes) as BusEvent;
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

/** Encodes an event the way the network's core does (used by the simulator and tests). */
export function encodeBusEvent(e: BusEvent): Uint8Array {
  const msg: Record<string, unknown> = { id: e.id, block: e.block, type: e.type, chainId: e.chainId };
  if (e.txHash !== undefined) msg.txHash = e.txHash;
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
    case 'order':
      msg.order = rawFromOrder(e.order);
      break;
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
