/**
 * A plain in-memory QueryStore over domain Blocks: the reference the real
 * stores are compared with. Written for obviousness, not speed: every query
 * filters and sorts everything, and paging follows the definition literally.
 */
import type { Block } from '../../src/domain/block.js';
import type { BundleFilter, BundleKey, SignerAdded } from '../../src/domain/bundle.js';
import {
  OrderError,
  OrderStatus,
  OrderType,
  PeggedReference,
  Side,
  TimeInForce,
  enumName,
  type EnumTable,
} from '../../src/domain/enums.js';
import { isLive, type Order, type OrderFilter, type OrderKey } from '../../src/domain/order.js';
import type { Page, PageRequest, PageRow } from '../../src/domain/page.js';
import type { CommittedBlock, QueryStore } from '../../src/store/store.js';

/** Protobuf JSON of an enum: its name, or the bare number when the table does not know it. */
function enumJson(table: EnumTable, n: number): string | number {
  return table.names[n] === undefined ? n : enumName(table, n);
}

/** An Order with its ids lowercased, as the stores keep it. */
function normalizeOrder(o: Order): Order {
  return { ...o, id: o.id.toLowerCase(), marketId: o.marketId.toLowerCase(), partyId: o.partyId.toLowerCase() };
}

/** The order node of ListOrdersResponse, in the original's field order. */
export function orderJson(o: Order): string {
  const node: Record<string, unknown> = {
    id: o.id,
    marketId: o.marketId,
    partyId: o.partyId,
    side: enumJson(Side, o.side),
    price: o.price,
    size: String(o.size),
    remaining: String(o.remaining),
    timeInForce: enumJson(TimeInForce, o.timeInForce),
    type: enumJson(OrderType, o.type),
    createdAt: String(o.createdAt),
    status: enumJson(OrderStatus, o.status),
    expiresAt: String(o.expiresAt),
    reference: o.reference,
  };
  if (o.reason !== undefined) node.reason = enumJson(OrderError, o.reason);
  node.updatedAt = String(o.updatedAt);
  node.version = String(o.version);
  node.batchId = String(o.batchId);
  if (o.peggedOrder !== undefined) {
    node.peggedOrder = { reference: enumJson(PeggedReference, o.peggedOrder.reference), offset: o.peggedOrder.offset };
  }
  node.liquidityProvisionId = o.liquidityProvisionId;
  node.postOnly = o.postOnly;
  node.reduceOnly = o.reduceOnly;
  if (o.icebergOrder !== undefined) {
    node.icebergOrder = {
      peakSize: String(o.icebergOrder.peakSize),
      minimumVisibleSize: String(o.icebergOrder.minimumVisibleSize),
      reservedRemaining: String(o.icebergOrder.reservedRemaining),
    };
  }
  return JSON.stringify(node);
}

/** "0x" + hex of each distinct signature in ascending byte order; "" when there is none. */
export function packSignatures(sigs: readonly Uint8Array[]): string {
  const distinct = new Map<string, Buffer>();
  for (const sig of sigs) distinct.set(Buffer.from(sig).toString('hex'), Buffer.from(sig));
  if (distinct.size === 0) return '';
  const sorted = [...distinct.values()].sort(Buffer.compare);
  return '0x' + sorted.map((b) => b.toString('hex')).join('');
}

export function bundleJson(b: SignerAdded, signatures: string): string {
  return JSON.stringify({
    newSigner: b.newSigner,
    submitter: b.submitter,
    nonce: b.nonce,
    timestamp: String(b.timestamp),
    signatures,
    epochSeq: String(b.epochSeq),
  });
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareOrderKeys(a: OrderKey, b: OrderKey): number {
  return compareBig(a.createdAt, b.createdAt) || compareText(a.id, b.id);
}

export function compareBundleKeys(a: BundleKey, b: BundleKey): number {
  return compareBig(a.timestamp, b.timestamp) || compareText(a.signatureId, b.signatureId);
}

/**
 * One page of `all` (every matching row, ascending by key), exactly as the
 * PageRequest contract defines it.
 */
export function pageOf<K>(
  all: readonly PageRow<K>[],
  compareKeys: (a: K, b: K) => number,
  request: PageRequest<K>,
): Page<K> {
  const inListOrder = (a: K, b: K) => (request.newestFirst ? -compareKeys(a, b) : compareKeys(a, b));
  const list = [...all].sort((a, b) => inListOrder(a.key, b.key));
  const cursor = request.cursor;

  if (request.mode === 'first') {
    const after = cursor === undefined ? list : list.filter((r) => inListOrder(r.key, cursor) > 0);
    return {
      rows: after.slice(0, request.limit),
      hasNextPage: after.length > request.limit,
      hasPreviousPage: cursor !== undefined && list.some((r) => inListOrder(r.key, cursor) <= 0),
    };
  }
  const before = cursor === undefined ? list : list.filter((r) => inListOrder(r.key, cursor) < 0);
  return {
    rows: before.slice(Math.max(0, before.length - request.limit)),
    hasNextPage: cursor !== undefined && list.some((r) => inListOrder(r.key, cursor) >= 0),
    hasPreviousPage: before.length > request.limit,
  };
}

function matchesOrder(o: Order, f: OrderFilter): boolean {
  if (f.statuses && !f.statuses.includes(o.status)) return false;
  if (f.types && !f.types.includes(o.type)) return false;
  if (f.timeInForces && !f.timeInForces.includes(o.timeInForce)) return false;
  if (f.excludeLiquidity && o.liquidityProvisionId !== '') return false;
  if (f.partyIds && !f.partyIds.includes(o.partyId)) return false;
  if (f.marketIds && !f.marketIds.includes(o.marketId)) return false;
  if (f.reference !== undefined && o.reference !== f.reference) return false;
  if (f.dateRange?.start !== undefined && o.createdAt < f.dateRange.start) return false;
  if (f.dateRange?.end !== undefined && o.createdAt >= f.dateRange.end) return false;
  if (f.liveOnly && !isLive(o)) return false;
  return true;
}

function matchesBundle(b: SignerAdded, f: BundleFilter): boolean {
  if (f.nodeId !== undefined && b.validatorId.toLowerCase() !== f.nodeId) return false;
  if (f.submitter !== undefined && b.submitter.toLowerCase() !== f.submitter) return false;
  if (f.epochSeq !== undefined && b.epochSeq !== f.epochSeq) return false;
  return true;
}

/** The model's view of everything the blocks said: current orders, bundles, signatures. */
export interface ModelState {
  orders: Map<string, Order>;
  bundles: Map<string, SignerAdded>;
  signatures: Map<string, Uint8Array[]>;
  lastBlock: CommittedBlock | undefined;
}

export function replay(blocks: readonly Block[]): ModelState {
  const state: ModelState = { orders: new Map(), bundles: new Map(), signatures: new Map(), lastBlock: undefined };
  for (const block of blocks) {
    for (const order of block.orders) {
      const o = normalizeOrder(order);
      state.orders.set(o.id, o);
    }
    for (const added of block.signersAdded) {
      state.bundles.set(added.signatureId.toLowerCase(), added);
    }
    for (const sig of block.nodeSignatures) {
      const id = sig.id.toLowerCase();
      const list = state.signatures.get(id) ?? [];
      list.push(sig.sig);
      state.signatures.set(id, list);
    }
    state.lastBlock = { height: block.height, time: block.time, chainId: block.chainId, hash: block.hash };
  }
  return state;
}

/** The current rows of the model, ascending by key; tests use them to compute expectations. */
export function orderRows(state: ModelState, filter: OrderFilter = {}): PageRow<OrderKey>[] {
  return [...state.orders.values()]
    .filter((o) => matchesOrder(o, filter))
    .map((o) => ({ json: orderJson(o), key: { createdAt: o.createdAt, id: o.id } }))
    .sort((a, b) => compareOrderKeys(a.key, b.key));
}

export function bundleRows(state: ModelState, filter: BundleFilter = {}): PageRow<BundleKey>[] {
  return [...state.bundles.entries()]
    .filter(([, b]) => matchesBundle(b, filter))
    .map(([signatureId, b]) => ({
      json: bundleJson(b, packSignatures(state.signatures.get(signatureId) ?? [])),
      key: { timestamp: b.timestamp, signatureId },
    }))
    .sort((a, b) => compareBundleKeys(a.key, b.key));
}

export function createModelStore(blocks: readonly Block[]): QueryStore {
  const state = replay(blocks);
  return {
    async listOrders(filter, page) {
      return pageOf(orderRows(state, filter), compareOrderKeys, page);
    },
    async listBundles(filter, page) {
      return pageOf(bundleRows(state, filter), compareBundleKeys, page);
    },
    async lastBlock() {
      return state.lastBlock;
    },
    async close() {},
  };
}
