/**
 * The reference model: the original data node's rules (docs/compatibility.md:
 * the lists, sections 2 to 5; one order, its versions, removed bundles and
 * each block's changes, section 12) applied to the events by plain in-memory
 * code. It is written on its own: its input types, enum names and JSON
 * printing live beside it (model-types.ts, model-enums.ts, model-json.ts), and
 * nothing of src/ runs in it, so that a mistake there cannot hide by being
 * copied here. Written for obviousness, not speed: every query filters and
 * sorts everything, and paging follows the definition literally.
 *
 * createModelStore adapts it to the store contract, for the API's tests that
 * need a store to serve; the property tests compare a real store's answers
 * with the model's pages directly (model-pages.ts).
 */
import type { BlockChanges } from '../../src/domain/order-stream.js';
import type { QueryStore } from '../../src/store/store.js';
import { STATUS_ACTIVE, STATUS_PARKED, TIF_FOK, TIF_IOC, TYPE_LIMIT } from './model-enums.js';
import {
  bundleJson, microsFloor, orderJson, packSignatures, printedAddress, printedId, removedBundleJson,
} from './model-json.js';
import type {
  ModelBlock, ModelBlockStamp, ModelBundleFilter, ModelBundleKey, ModelOrder, ModelOrderFilter, ModelOrderKey, ModelPage,
  ModelPageRequest, ModelRow, ModelSignerAdded, ModelSignerRemoved, ModelVersionKey,
} from './model-types.js';

export { bundleJson, microsFloor, orderJson, packSignatures, removedBundleJson };

// ---- ordering and paging --------------------------------------------------

function compareBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Orders in ascending listing order, i.e. oldest first: createdAt ascending,
 * then id DEscending, the exact reverse of the original's newest first
 * (createdAt DESC, id ASC; section 5.1). Keys hold the truncated createdAt
 * and lower-case ids.
 */
export function compareOrderKeys(a: ModelOrderKey, b: ModelOrderKey): number {
  return compareBig(a.createdAt, b.createdAt) || compareText(b.id, a.id);
}

/** Bundles in ascending listing order: timestamp, then signature id, both ascending (newest first is both DESC). */
export function compareBundleKeys(a: ModelBundleKey, b: ModelBundleKey): number {
  return compareBig(a.timestamp, b.timestamp) || compareText(a.signatureId, b.signatureId);
}

/** An order's versions in ascending order; the listing is highest first (section 12.2). */
export function compareVersionKeys(a: ModelVersionKey, b: ModelVersionKey): number {
  return compareBig(a.version, b.version);
}

/**
 * One page of `all` (every matching row), as section 5 defines it:
 * `compareKeys` is the ascending listing order (oldest first); `first` rows
 * after the cursor or `last` rows before it, and whether a row lies beyond
 * each end of the page.
 */
export function pageOf<K>(all: readonly ModelRow<K>[], compareKeys: (a: K, b: K) => number, request: ModelPageRequest<K>): ModelPage<K> {
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

/** On the book: ACTIVE or PARKED, LIMIT, and not IOC or FOK (section 5.4). */
function isLiveOrder(o: ModelOrder): boolean {
  return (o.status === STATUS_ACTIVE || o.status === STATUS_PARKED) && o.type === TYPE_LIMIT &&
    o.timeInForce !== TIF_IOC && o.timeInForce !== TIF_FOK;
}

function matchesOrder(o: ModelOrder, f: ModelOrderFilter): boolean {
  const createdAt = microsFloor(o.createdAt);
  if (f.statuses && !f.statuses.includes(o.status)) return false;
  if (f.types && !f.types.includes(o.type)) return false;
  if (f.timeInForces && !f.timeInForces.includes(o.timeInForce)) return false;
  if (f.excludeLiquidity && o.liquidityProvisionId !== '') return false;
  if (f.partyIds && !f.partyIds.map(printedId).includes(printedId(o.partyId))) return false;
  if (f.marketIds && !f.marketIds.map(printedId).includes(printedId(o.marketId))) return false;
  if (f.reference !== undefined && o.reference !== f.reference) return false;
  // The bounds are truncated like the times they are compared with: start inclusive, end exclusive (sections 2.2, 4).
  if (f.dateRange?.start !== undefined && createdAt < microsFloor(f.dateRange.start)) return false;
  if (f.dateRange?.end !== undefined && createdAt >= microsFloor(f.dateRange.end)) return false;
  if (f.liveOnly && !isLiveOrder(o)) return false;
  return true;
}

function matchesBundle(validatorId: string, submitter: string, epochSeq: bigint, f: ModelBundleFilter): boolean {
  if (f.nodeId !== undefined && printedId(validatorId) !== printedId(f.nodeId)) return false;
  if (f.submitter !== undefined && printedAddress(submitter) !== printedAddress(f.submitter)) return false;
  if (f.epochSeq !== undefined && epochSeq !== f.epochSeq) return false;
  return true;
}

// ---- replay ---------------------------------------------------------------

/** One order's state at the end of one block it changed in: an (order, version) at its last update there. */
export interface HistoryRow {
  height: bigint;
  order: ModelOrder;
}

/**
 * The model's view of everything the blocks said. Every answer is computed
 * from this state alone, so a rule that changes what is kept (pruning old
 * history, say) is a function from one ModelState to another, applied
 * before answering: storeOfState(prune(replay(blocks))).
 */
export interface ModelState {
  /** Every block kept, in height order. */
  blocks: ModelBlockStamp[];
  /** Current state of each order, by lower-case id: the last event wins. */
  orders: Map<string, ModelOrder>;
  /**
   * Each (order, version) at its last update in each block it changed in, in
   * block order and, within a block, in the order of those last updates
   * (section 12.1): the versions listing and the stream's changes read it.
   */
  history: HistoryRow[];
  /** Signer-added bundles by lower-case signature id. */
  bundles: Map<string, ModelSignerAdded>;
  /** Signer-removed bundles, one per signature submitter, by lower-case signature id (section 12.3). */
  removed: Map<string, { event: ModelSignerRemoved; submitter: string }>;
  /** Node signatures by the lower-case id of what they sign. */
  signatures: Map<string, Uint8Array[]>;
}

/** The last block kept, or undefined before any. */
export function lastBlockOf(state: ModelState): ModelBlockStamp | undefined {
  return state.blocks.at(-1);
}

/**
 * Replays blocks in order (section 9.6). A block at or below the last
 * replayed height is skipped (a restarted node skips what it has; a height
 * that comes again with another hash keeps its first block); within a
 * block, the last event for an order wins.
 */
export function replay(blocks: readonly ModelBlock[]): ModelState {
  const state: ModelState = {
    blocks: [], orders: new Map(), history: [], bundles: new Map(), removed: new Map(), signatures: new Map(),
  };
  for (const block of blocks) {
    const last = lastBlockOf(state);
    if (last !== undefined && block.height <= last.height) continue;
    const lastUpdates = new Map<string, ModelOrder>();
    for (const order of block.orders) {
      state.orders.set(printedId(order.id), order);
      const key = `${printedId(order.id)} ${order.version}`;
      lastUpdates.delete(key);
      lastUpdates.set(key, order);
    }
    for (const order of lastUpdates.values()) state.history.push({ height: block.height, order });
    for (const event of block.signersRemoved) {
      for (const { signatureId, submitter } of event.signatureSubmitters) state.removed.set(printedId(signatureId), { event, submitter });
    }
    for (const added of block.signersAdded) state.bundles.set(printedId(added.signatureId), added);
    for (const sig of block.nodeSignatures) {
      const id = printedId(sig.id);
      state.signatures.set(id, [...(state.signatures.get(id) ?? []), sig.sig]);
    }
    state.blocks.push({ height: block.height, time: block.time, chainId: block.chainId, hash: block.hash });
  }
  return state;
}

// ---- listings ---------------------------------------------------------------

/** The current orders matching `filter`, in ascending listing order (oldest first). */
export function orderRows(state: ModelState, filter: ModelOrderFilter = {}): ModelRow<ModelOrderKey>[] {
  return [...state.orders.values()]
    .filter((o) => matchesOrder(o, filter))
    .map((o) => ({ json: orderJson(o), key: { createdAt: microsFloor(o.createdAt), id: printedId(o.id) } }))
    .sort((a, b) => compareOrderKeys(a.key, b.key));
}

/** The signer-added bundles matching `filter`, with the signatures received so far, in ascending listing order. */
export function bundleRows(state: ModelState, filter: ModelBundleFilter = {}): ModelRow<ModelBundleKey>[] {
  return [...state.bundles.entries()]
    .filter(([, b]) => matchesBundle(b.validatorId, b.submitter, b.epochSeq, filter))
    .map(([signatureId, b]) => ({
      json: bundleJson(b, packSignatures(state.signatures.get(signatureId) ?? [])),
      key: { timestamp: microsFloor(b.timestamp), signatureId },
    }))
    .sort((a, b) => compareBundleKeys(a.key, b.key));
}

export function removedBundleRows(state: ModelState, filter: ModelBundleFilter = {}): ModelRow<ModelBundleKey>[] {
  return [...state.removed.entries()]
    .filter(([, { event, submitter }]) => matchesBundle(event.validatorId, submitter, event.epochSeq, filter))
    .map(([signatureId, { event, submitter }]) => ({
      json: removedBundleJson(event, submitter, packSignatures(state.signatures.get(signatureId) ?? [])),
      key: { timestamp: microsFloor(event.timestamp), signatureId },
    }))
    .sort((a, b) => compareBundleKeys(a.key, b.key));
}

/** orderVersions' answer per history: asked once per order and version, a scan each time made a test quadratic. */
const versionsOfHistory = new WeakMap<readonly HistoryRow[], ReadonlyMap<string, ReadonlyMap<bigint, ModelOrder>>>();

/** Of each order (by lower-case id), the last state of each version: its latest history row. */
export function orderVersions(state: ModelState): ReadonlyMap<string, ReadonlyMap<bigint, ModelOrder>> {
  const known = versionsOfHistory.get(state.history);
  if (known !== undefined) return known;
  const all = new Map<string, Map<bigint, ModelOrder>>();
  for (const { order } of state.history) {
    const id = printedId(order.id);
    all.set(id, (all.get(id) ?? new Map<bigint, ModelOrder>()).set(order.version, order));
  }
  versionsOfHistory.set(state.history, all);
  return all;
}

/** Of each order (by lower-case id), its latest history row: the one its current state was written with. */
export function latestRows(state: ModelState): Map<string, HistoryRow> {
  const latest = new Map<string, HistoryRow>();
  for (const row of state.history) {
    const id = printedId(row.order.id);
    if (row.order.version === state.orders.get(id)?.version) latest.set(id, row);
  }
  return latest;
}

/** An order's versions, each in its last state, in ascending version order. */
export function versionRows(state: ModelState, id: string): ModelRow<ModelVersionKey>[] {
  return [...(orderVersions(state).get(printedId(id))?.entries() ?? [])]
    .map(([version, o]) => ({ json: orderJson(o), key: { id: printedId(id), version } }))
    .sort((a, b) => compareVersionKeys(a.key, b.key));
}

/** Per block after `after` up to `upTo`, its history rows as the stream sends them (section 12.4); blocks without any left out. */
export function changesOf(state: ModelState, after: bigint, upTo: bigint, maxBlocks: number): BlockChanges[] {
  const out: BlockChanges[] = [];
  for (const { height, order } of state.history) {
    if (height <= after || height > upTo) continue;
    const change = { node: orderJson(order), marketId: printedId(order.marketId), partyId: printedId(order.partyId) };
    if (out.at(-1)?.height === height) out.at(-1)!.changes.push(change);
    else if (out.length < maxBlocks) out.push({ height, changes: [change] });
    else break;
  }
  return out;
}

// ---- the model as a store -----------------------------------------------------

/** A QueryStore answering from `state`; its pages name the state's last block. */
export function storeOfState(state: ModelState): QueryStore {
  const last = lastBlockOf(state);
  const stamp = last === undefined ? {} : { lastBlock: { height: last.height, time: last.time } };
  return {
    async listOrders(filter, page) {
      return { ...pageOf(orderRows(state, filter), compareOrderKeys, page), ...stamp };
    },
    async listBundles(filter, page) {
      return { ...pageOf(bundleRows(state, filter), compareBundleKeys, page), ...stamp };
    },
    async listRemovedBundles(filter, page) {
      return { ...pageOf(removedBundleRows(state, filter), compareBundleKeys, page), ...stamp };
    },
    async getOrder(id, version) {
      const o = version === undefined ? state.orders.get(printedId(id)) : orderVersions(state).get(printedId(id))?.get(version);
      return { node: o === undefined ? undefined : orderJson(o), ...stamp };
    },
    async listOrderVersions(id, page) {
      return { ...pageOf(versionRows(state, id), compareVersionKeys, page), ...stamp };
    },
    async orderChanges(after, upTo, maxBlocks) {
      return changesOf(state, after, upTo, maxBlocks);
    },
    async firstChangeHeight() {
      return state.blocks[0]?.height ?? 1n;
    },
    watchBlocks: () => () => undefined,
    async lastBlock() {
      return lastBlockOf(state);
    },
    async close() {},
  };
}

/**
 * A QueryStore answering from the replayed blocks; with `keep`, from what
 * that makes of the replayed state (./model-retention.ts: a retention's rules).
 */
export function createModelStore(blocks: readonly ModelBlock[], keep: (state: ModelState) => ModelState = (s) => s): QueryStore {
  return storeOfState(keep(replay(blocks)));
}
