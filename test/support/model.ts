/**
 * A plain in-memory QueryStore over domain Blocks: the reference the real
 * stores are compared with. It applies the original data node's rules as the
 * facts sheets state them (the lists: sections 3 and 5; one order, its
 * versions, removed bundles and each block's changes: the companions sheet,
 * sections 1 to 4), written here on their own: it
 * takes types and enum names from src/domain, and none of the helpers the
 * store or the API apply these rules with (times, ordering, addresses, JSON),
 * so that a mistake there cannot hide by being copied here. Written for
 * obviousness, not speed: every query filters and sorts everything, and
 * paging follows the definition literally.
 */
import type { Block } from '../../src/domain/block.js';
import type { BundleFilter, BundleKey, SignerAdded, SignerRemoved } from '../../src/domain/bundle.js';
import {
  OrderError,
  OrderStatus,
  OrderType,
  PeggedReference,
  STATUS,
  Side,
  TIF,
  TimeInForce,
  TYPE,
  type EnumTable,
} from '../../src/domain/enums.js';
import type { Order, OrderFilter, OrderKey, OrderVersionKey } from '../../src/domain/order.js';
import type { BlockChanges } from '../../src/domain/order-stream.js';
import type { Page, PageRequest, PageRow } from '../../src/domain/page.js';
import type { CommittedBlock, QueryStore } from '../../src/store/store.js';
import { WITHOUT_COMPANIONS } from './without-companions.js';

// ---- the original's rules -------------------------------------------------

/**
 * Unix ns as the original answers it: PostgreSQL keeps microseconds, and Go's
 * time.Truncate rounds down, so 1678444076736102285 -> 1678444076736102000,
 * -1500 -> -2000, 0 -> 0.
 */
export function microsFloor(ns: bigint): bigint {
  const below = ((ns % 1000n) + 1000n) % 1000n;
  return ns - below;
}

/** Protobuf JSON of an enum: its name, or the bare number when the table does not know it. */
function enumJson(table: EnumTable, n: number): string | number {
  return table.names[n] ?? n;
}

/** Ids are printed as lower-case hex (the original stores their bytes); "network" is already lower case. */
function printedId(id: string): string {
  return id.toLowerCase();
}

/** "0x" and lower-case hex, whatever case the event used, its prefix included. */
function printedAddress(address: string): string {
  const hex = /^0x/i.test(address) ? address.slice(2) : address;
  return '0x' + hex.toLowerCase();
}

const PEGGED_REFERENCE_UNSPECIFIED = 0;
const ORDER_ERROR_UNSPECIFIED = 0;

/** On the book: ACTIVE or PARKED, LIMIT, and not IOC or FOK (facts, section 5). */
function isLiveOrder(o: Order): boolean {
  return (o.status === STATUS.ACTIVE || o.status === STATUS.PARKED) && o.type === TYPE.LIMIT &&
    o.timeInForce !== TIF.IOC && o.timeInForce !== TIF.FOK;
}

/** The order node of ListOrdersResponse, in the proto's field order. */
export function orderJson(o: Order): string {
  const node: Record<string, unknown> = {
    id: printedId(o.id),
    marketId: printedId(o.marketId),
    partyId: printedId(o.partyId),
    side: enumJson(Side, o.side),
    price: o.price,
    size: o.size.toString(),
    remaining: o.remaining.toString(),
    timeInForce: enumJson(TimeInForce, o.timeInForce),
    type: enumJson(OrderType, o.type),
    createdAt: microsFloor(o.createdAt).toString(),
    status: enumJson(OrderStatus, o.status),
    expiresAt: microsFloor(o.expiresAt).toString(),
    reference: o.reference,
  };
  // `optional` in the proto: left out when unset, and the original stores 0 as unset.
  if (o.reason !== undefined && o.reason !== ORDER_ERROR_UNSPECIFIED) node.reason = enumJson(OrderError, o.reason);
  node.updatedAt = microsFloor(o.updatedAt).toString();
  node.version = o.version.toString();
  node.batchId = o.batchId.toString();
  // A plain message field: always there, null when there is no peg to speak of.
  node.peggedOrder = o.peggedOrder === undefined || o.peggedOrder.reference === PEGGED_REFERENCE_UNSPECIFIED
    ? null
    : { reference: enumJson(PeggedReference, o.peggedOrder.reference), offset: o.peggedOrder.offset };
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

/** "0x" + hex of each distinct signature in ascending byte order; "" when there is none. */
export function packSignatures(sigs: readonly Uint8Array[]): string {
  const distinct = new Map<string, Buffer>();
  for (const sig of sigs) distinct.set(Buffer.from(sig).toString('hex'), Buffer.from(sig));
  if (distinct.size === 0) return '';
  const sorted = [...distinct.values()].sort(Buffer.compare);
  return '0x' + sorted.map((b) => b.toString('hex')).join('');
}

/** The bundle node, in the proto's field order. */
export function bundleJson(b: SignerAdded, signatures: string): string {
  return JSON.stringify({
    newSigner: printedAddress(b.newSigner),
    submitter: printedAddress(b.submitter),
    nonce: b.nonce,
    timestamp: microsFloor(b.timestamp).toString(),
    signatures,
    epochSeq: b.epochSeq.toString(),
  });
}

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Orders in ascending listing order, i.e. oldest first: createdAt ascending,
 * then id DEscending, the exact reverse of the original's newest first
 * (createdAt DESC, id ASC). Keys hold the truncated createdAt and lower-case ids.
 */
export function compareOrderKeys(a: OrderKey, b: OrderKey): number {
  return compareBig(a.createdAt, b.createdAt) || compareText(b.id, a.id);
}

/** Bundles in ascending listing order: timestamp, then signature id, both ascending (newest first is both DESC). */
export function compareBundleKeys(a: BundleKey, b: BundleKey): number {
  return compareBig(a.timestamp, b.timestamp) || compareText(a.signatureId, b.signatureId);
}

// ---- paging ---------------------------------------------------------------

/**
 * One page of `all` (every matching row), exactly as the PageRequest contract
 * defines it; `compareKeys` is the ascending listing order (oldest first).
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

// ---- filters --------------------------------------------------------------

function matchesOrder(o: Order, f: OrderFilter): boolean {
  const createdAt = microsFloor(o.createdAt);
  if (f.statuses && !f.statuses.includes(o.status)) return false;
  if (f.types && !f.types.includes(o.type)) return false;
  if (f.timeInForces && !f.timeInForces.includes(o.timeInForce)) return false;
  if (f.excludeLiquidity && o.liquidityProvisionId !== '') return false;
  if (f.partyIds && !f.partyIds.map(printedId).includes(printedId(o.partyId))) return false;
  if (f.marketIds && !f.marketIds.map(printedId).includes(printedId(o.marketId))) return false;
  if (f.reference !== undefined && o.reference !== f.reference) return false;
  // The bounds are truncated like the times they are compared with: start inclusive, end exclusive.
  if (f.dateRange?.start !== undefined && createdAt < microsFloor(f.dateRange.start)) return false;
  if (f.dateRange?.end !== undefined && createdAt >= microsFloor(f.dateRange.end)) return false;
  if (f.liveOnly && !isLiveOrder(o)) return false;
  return true;
}

function matchesBundle(b: SignerAdded, f: BundleFilter): boolean {
  if (f.nodeId !== undefined && printedId(b.validatorId) !== printedId(f.nodeId)) return false;
  if (f.submitter !== undefined && printedAddress(b.submitter) !== printedAddress(f.submitter)) return false;
  if (f.epochSeq !== undefined && b.epochSeq !== f.epochSeq) return false;
  return true;
}

// ---- replay ---------------------------------------------------------------

/** The model's view of everything the blocks said: current orders, bundles, signatures. */
export interface ModelState {
  /** Current state of each order, by lower-case id: the last event wins. */
  orders: Map<string, Order>;
  /** By lower-case signature id. */
  bundles: Map<string, SignerAdded>;
  /**
   * Of each order (by lower-case id), the last state of each version: the
   * latest row of that id and version (companions sheet, section 1).
   */
  versions: Map<string, Map<bigint, Order>>;
  /** Signer-removed bundles, one per signature submitter, by lower-case signature id (companions sheet, section 3). */
  removed: Map<string, { event: SignerRemoved; submitter: string }>;
  signatures: Map<string, Uint8Array[]>;
  /** The last block replayed. */
  lastBlock: CommittedBlock | undefined;
  /** Of each order (by lower-case id), the block of each version's last state (./model-retention.ts reads it). */
  versionBlocks: Map<string, Map<bigint, ReplayedBlock>>;
  /** Every block replayed, in order. */
  blocks: ReplayedBlock[];
}

export interface ReplayedBlock {
  height: bigint;
  time: bigint;
}

/**
 * Replays blocks in order. A block at or below the last replayed height is
 * skipped (a restarted node skips what it has; a height that comes again
 * with another hash keeps its first block); within a block, the last event
 * for an order wins.
 */
export function replay(blocks: readonly Block[]): ModelState {
  const state: ModelState = {
    orders: new Map(), bundles: new Map(), signatures: new Map(), versions: new Map(), removed: new Map(), lastBlock: undefined,
    versionBlocks: new Map(), blocks: [],
  };
  for (const block of blocks) {
    if (state.lastBlock !== undefined && block.height <= state.lastBlock.height) continue;
    const at: ReplayedBlock = { height: block.height, time: block.time };
    state.blocks.push(at);
    for (const order of block.orders) {
      state.orders.set(printedId(order.id), order);
      const versions = state.versions.get(printedId(order.id)) ?? new Map<bigint, Order>();
      versions.set(order.version, order);
      state.versions.set(printedId(order.id), versions);
      const blocksOf = state.versionBlocks.get(printedId(order.id)) ?? new Map<bigint, ReplayedBlock>();
      blocksOf.set(order.version, at);
      state.versionBlocks.set(printedId(order.id), blocksOf);
    }
    for (const event of block.signersRemoved) {
      for (const { signatureId, submitter } of event.signatureSubmitters) state.removed.set(printedId(signatureId), { event, submitter });
    }
    for (const added of block.signersAdded) state.bundles.set(printedId(added.signatureId), added);
    for (const sig of block.nodeSignatures) {
      const id = printedId(sig.id);
      state.signatures.set(id, [...(state.signatures.get(id) ?? []), sig.sig]);
    }
    state.lastBlock = { height: block.height, time: block.time, chainId: block.chainId, hash: block.hash };
  }
  return state;
}

/** The current rows of the model, in ascending listing order (oldest first); tests use them for expectations. */
export function orderRows(state: ModelState, filter: OrderFilter = {}): PageRow<OrderKey>[] {
  return [...state.orders.values()]
    .filter((o) => matchesOrder(o, filter))
    .map((o) => ({ json: orderJson(o), key: { createdAt: microsFloor(o.createdAt), id: printedId(o.id) } }))
    .sort((a, b) => compareOrderKeys(a.key, b.key));
}

export function bundleRows(state: ModelState, filter: BundleFilter = {}): PageRow<BundleKey>[] {
  return [...state.bundles.entries()]
    .filter(([, b]) => matchesBundle(b, filter))
    .map(([signatureId, b]) => ({
      json: bundleJson(b, packSignatures(state.signatures.get(signatureId) ?? [])),
      key: { timestamp: microsFloor(b.timestamp), signatureId },
    }))
    .sort((a, b) => compareBundleKeys(a.key, b.key));
}

/** The removed bundle node: oldSigner, submitter, nonce, timestamp, signatures, epochSeq (companions sheet, section 3). */
export function removedBundleJson(e: SignerRemoved, submitter: string, signatures: string): string {
  return JSON.stringify({
    oldSigner: printedAddress(e.oldSigner),
    submitter: printedAddress(submitter),
    nonce: e.nonce,
    timestamp: microsFloor(e.timestamp).toString(),
    signatures,
    epochSeq: e.epochSeq.toString(),
  });
}

export function removedBundleRows(state: ModelState, f: BundleFilter = {}): PageRow<BundleKey>[] {
  return [...state.removed.entries()]
    .filter(([, { event, submitter }]) =>
      (f.nodeId === undefined || printedId(event.validatorId) === printedId(f.nodeId)) &&
      (f.submitter === undefined || printedAddress(submitter) === printedAddress(f.submitter)) &&
      (f.epochSeq === undefined || event.epochSeq === f.epochSeq))
    .map(([signatureId, { event, submitter }]) => ({
      json: removedBundleJson(event, submitter, packSignatures(state.signatures.get(signatureId) ?? [])),
      key: { timestamp: microsFloor(event.timestamp), signatureId },
    }))
    .sort((a, b) => compareBundleKeys(a.key, b.key));
}

/** An order's versions, each in its last state, in ascending version order (the list is highest first). */
export function versionRows(state: ModelState, id: string): PageRow<OrderVersionKey>[] {
  return [...(state.versions.get(printedId(id))?.entries() ?? [])]
    .map(([version, o]) => ({ json: orderJson(o), key: { id: printedId(id), version } }))
    .sort((a, b) => compareBig(a.key.version, b.key.version));
}

/**
 * A QueryStore answering from the replayed blocks; its pages name the last
 * block replayed. With `keep`, it answers what that applies to the replayed
 * state (./model-retention.ts: a retention's rules).
 */
export function createModelStore(blocks: readonly Block[], keep: (state: ModelState) => ModelState = (s) => s): QueryStore {
  const state = keep(replay(blocks));
  const firstKept = state.blocks[0]?.height;
  const last = state.lastBlock;
  const stamped = <K>(page: Page<K>): Page<K> =>
    last === undefined ? page : { ...page, lastBlock: { height: last.height, time: last.time } };
  return { ...WITHOUT_COMPANIONS,
    async listOrders(filter, page) {
      return stamped(pageOf(orderRows(state, filter), compareOrderKeys, page));
    },
    async listBundles(filter, page) {
      return stamped(pageOf(bundleRows(state, filter), compareBundleKeys, page));
    },
    async listRemovedBundles(filter, page) {
      return stamped(pageOf(removedBundleRows(state, filter), compareBundleKeys, page));
    },
    async getOrder(id, version) {
      const o = version === undefined ? state.orders.get(printedId(id)) : state.versions.get(printedId(id))?.get(version);
      const node = o === undefined ? undefined : orderJson(o);
      return last === undefined ? { node } : { node, lastBlock: { height: last.height, time: last.time } };
    },
    /** Per block, each (order, version) once at its last update, in the order of those updates (companions sheet, section 4). */
    async orderChanges(after, upTo, maxBlocks) {
      const out: BlockChanges[] = [];
      let lastHeight: bigint | undefined;
      for (const b of blocks) {
        if (lastHeight !== undefined && b.height <= lastHeight) continue;
        lastHeight = b.height;
        if (b.height <= after || b.height > upTo || out.length >= maxBlocks) continue;
        if (firstKept !== undefined && b.height < firstKept) continue;
        const last = new Map<string, Order>();
        for (const o of b.orders) {
          const key = `${printedId(o.id)} ${o.version}`;
          last.delete(key);
          last.set(key, o);
        }
        if (last.size === 0) continue;
        out.push({
          height: b.height,
          changes: [...last.values()].map((o) => ({ node: orderJson(o), marketId: printedId(o.marketId), partyId: printedId(o.partyId) })),
        });
      }
      return out;
    },
    async firstChangeHeight() {
      return firstKept ?? blocks[0]?.height ?? 1n;
    },
    watchBlocks: () => () => undefined,
    async listOrderVersions(id, page) {
      return stamped(pageOf(versionRows(state, id), (a, b) => compareBig(a.version, b.version), page));
    },
    async lastBlock() {
      return state.lastBlock;
    },
    async close() {},
  };
}
