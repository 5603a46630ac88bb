/**
 * The model's nodes: how the original prints an order or a bundle
 * (docs/compatibility.md, sections 3 and 4), written here on their own, with
 * none of the helpers the store or the API print them with.
 */
import { ORDER_ERROR, ORDER_STATUS, ORDER_TYPE, PEGGED_REFERENCE, SIDE, TIME_IN_FORCE, enumJson } from './model-enums.js';
import type { ModelOrder, ModelSignerAdded, ModelSignerRemoved } from './model-types.js';

/**
 * Unix ns as the original answers it (section 4): PostgreSQL keeps
 * microseconds and rounds down, so 1678444076736102285 -> 1678444076736102000,
 * -1500 -> -2000, 0 -> 0.
 */
export function microsFloor(ns: bigint): bigint {
  const below = ((ns % 1000n) + 1000n) % 1000n;
  return ns - below;
}

/** Ids are printed as lower-case hex (the original stores their bytes); "network" is already lower case. */
export function printedId(id: string): string {
  return id.toLowerCase();
}

/** "0x" and lower-case hex, whatever case the event used, its prefix included (section 3.2). */
export function printedAddress(address: string): string {
  const hex = /^0x/i.test(address) ? address.slice(2) : address;
  return '0x' + hex.toLowerCase();
}

const PEGGED_REFERENCE_UNSPECIFIED = 0;
const ORDER_ERROR_UNSPECIFIED = 0;

/** The order node, in the proto's field order (section 3.1). */
export function orderJson(o: ModelOrder): string {
  const node: Record<string, unknown> = {
    id: printedId(o.id),
    marketId: printedId(o.marketId),
    partyId: printedId(o.partyId),
    side: enumJson(SIDE, o.side),
    price: o.price,
    size: o.size.toString(),
    remaining: o.remaining.toString(),
    timeInForce: enumJson(TIME_IN_FORCE, o.timeInForce),
    type: enumJson(ORDER_TYPE, o.type),
    createdAt: microsFloor(o.createdAt).toString(),
    status: enumJson(ORDER_STATUS, o.status),
    expiresAt: microsFloor(o.expiresAt).toString(),
    reference: o.reference,
  };
  // `optional` in the proto: left out when unset, and the original stores 0 as unset.
  if (o.reason !== undefined && o.reason !== ORDER_ERROR_UNSPECIFIED) node.reason = enumJson(ORDER_ERROR, o.reason);
  node.updatedAt = microsFloor(o.updatedAt).toString();
  node.version = o.version.toString();
  node.batchId = o.batchId.toString();
  // A plain message field: always there, null when there is no peg to speak of.
  node.peggedOrder = o.peggedOrder === undefined || o.peggedOrder.reference === PEGGED_REFERENCE_UNSPECIFIED
    ? null
    : { reference: enumJson(PEGGED_REFERENCE, o.peggedOrder.reference), offset: o.peggedOrder.offset };
  node.liquidityProvisionId = printedId(o.liquidityProvisionId);
  node.postOnly = o.postOnly;
  node.reduceOnly = o.reduceOnly;
  if (o.icebergOrder !== undefined) {
    node.icebergOrder = {
      peakSize: o.icebergOrder.peakSize.toString(),
      minimumVisibleSize: o.icebergOrder.minimumVisibleSize.toString(),
      reservedRemaining: o.icebergOrder.reservedRemaining.toString(),
    };
  }
  return JSON.stringify(node);
}

/** "0x" + hex of each distinct signature in ascending byte order; "" when there is none (section 3.2). */
export function packSignatures(sigs: readonly Uint8Array[]): string {
  const distinct = new Map<string, Buffer>();
  for (const sig of sigs) distinct.set(Buffer.from(sig).toString('hex'), Buffer.from(sig));
  if (distinct.size === 0) return '';
  const sorted = [...distinct.values()].sort(Buffer.compare);
  return '0x' + sorted.map((b) => b.toString('hex')).join('');
}

/** The bundle node, in the proto's field order (section 3.2). */
export function bundleJson(b: ModelSignerAdded, signatures: string): string {
  return JSON.stringify({
    newSigner: printedAddress(b.newSigner),
    submitter: printedAddress(b.submitter),
    nonce: b.nonce,
    timestamp: microsFloor(b.timestamp).toString(),
    signatures,
    epochSeq: b.epochSeq.toString(),
  });
}

/** The removed bundle node: oldSigner, submitter, nonce, timestamp, signatures, epochSeq (section 12.3). */
export function removedBundleJson(e: ModelSignerRemoved, submitter: string, signatures: string): string {
  return JSON.stringify({
    oldSigner: printedAddress(e.oldSigner),
    submitter: printedAddress(submitter),
    nonce: e.nonce,
    timestamp: microsFloor(e.timestamp).toString(),
    signatures,
    epochSeq: e.epochSeq.toString(),
  });
}
