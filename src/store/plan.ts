/**
 * Backend-neutral query planning: which index drives a query, how an IN list
 * on that index splits into ordered branches, what is left to check row by
 * row, and how a keyset page request turns into index scans. Backends only
 * turn these decisions into SQL text.
 */
import { InternalError } from '../errors.js';
import type { BundleFilter } from '../domain/bundle.js';
import { LIVE_STATUSES, LIVE_TYPE, NOT_LIVE_TIME_IN_FORCES, type OrderFilter, type OrderKey } from '../domain/order.js';
import type { Page, PageRequest, PageRow } from '../domain/page.js';
import { toMicros } from '../domain/time.js';
import {
  BUNDLE_INDEXES,
  mapValues,
  ORDER_INDEXES,
  type BundleDimension,
  type BundlePathName,
  type OrderDimension,
  type OrderPathName,
} from './indexes.js';
import { HIGHEST_ORDER_ID } from './order-key.js';

// ---------------------------------------------------------------- keyset paging

export type SortDirection = 'asc' | 'desc';

/** Row-value comparison of the listing key against a cursor key. */
export type KeyBound = '<' | '<=' | '>' | '>=';

/** One ordered walk along the listing key. */
export interface KeysetScan<K> {
  direction: SortDirection;
  /** Where the walk starts, if anywhere but the end of the index. */
  from?: { key: K; bound: KeyBound };
  limit: number;
}

export interface PagePlan<K> {
  /** The page rows, nearest the cursor first, one more than asked to learn if more exist. */
  rows: KeysetScan<K>;
  /**
   * Does a matching row exist on the cursor's other side (at or behind it)?
   * Absent when there is no cursor: nothing lies beyond the start.
   */
  beyond?: KeysetScan<K>;
}

const reverse = (d: SortDirection): SortDirection => (d === 'asc' ? 'desc' : 'asc');

/** The comparison that keeps rows ahead of (or, inclusive, at) the cursor when walking in `direction`. */
export function boundFor(direction: SortDirection, inclusive: boolean): KeyBound {
  if (direction === 'desc') return inclusive ? '<=' : '<';
  return inclusive ? '>=' : '>';
}

/**
 * The scans answering a page request. A 'first' page walks the listing order
 * forward from the cursor; a 'last' page walks it backward and is flipped back
 * by assemblePage. The beyond-scan walks the other way from the cursor,
 * cursor included, because the cursor row itself may still match.
 */
export function planPage<K>(page: PageRequest<K>): PagePlan<K> {
  if (!Number.isSafeInteger(page.limit) || page.limit < 1) {
    throw new InternalError(`page limit must be a positive integer, got ${page.limit}`);
  }
  const listing: SortDirection = page.newestFirst ? 'desc' : 'asc';
  const walk = page.mode === 'first' ? listing : reverse(listing);
  const rows: KeysetScan<K> = { direction: walk, limit: page.limit + 1 };
  if (page.cursor === undefined) return { rows };
  rows.from = { key: page.cursor, bound: boundFor(walk, false) };
  const back = reverse(walk);
  return { rows, beyond: { direction: back, from: { key: page.cursor, bound: boundFor(back, true) }, limit: 1 } };
}

/** Builds the page from what the scans of planPage found. */
export function assemblePage<K>(page: PageRequest<K>, fetched: PageRow<K>[], beyondExists: boolean): Page<K> {
  const more = fetched.length > page.limit;
  const rows = more ? fetched.slice(0, page.limit) : fetched;
  if (page.mode === 'first') return { rows, hasNextPage: more, hasPreviousPage: beyondExists };
  rows.reverse();
  return { rows, hasNextPage: beyondExists, hasPreviousPage: more };
}

/** One end of a key range. */
export interface RangeEnd<K> {
  key: K;
  inclusive: boolean;
}

/** The keys a scan may return: lower <= key <= upper, each end optional. */
export interface KeyRange<K> {
  lower?: RangeEnd<K>;
  upper?: RangeEnd<K>;
}

/** The range a scan's cursor bound leaves open. */
export function scanRange<K>(scan: KeysetScan<K>): KeyRange<K> {
  const from = scan.from;
  if (from === undefined) return {};
  const end = (inclusive: boolean): RangeEnd<K> => ({ key: from.key, inclusive });
  switch (from.bound) {
    case '<': return { upper: end(false) };
    case '<=': return { upper: end(true) };
    case '>': return { lower: end(false) };
    case '>=': return { lower: end(true) };
  }
}

// ---------------------------------------------------------------- orders

export type { OrderDimension, OrderPathName } from './indexes.js';

/** An index of the current orders, ordered by (createdAt, id) after its leading columns. */
export interface OrderAccessPath {
  /** Stable name; each backend maps it to one of its indexes. */
  readonly name: string;
  readonly dimensions: readonly OrderDimension[];
  /** The index holds live orders only, so it serves liveOnly queries alone. */
  readonly liveOnly: boolean;
  /** The index holds orders with a non-empty reference only. */
  readonly referencedOnly: boolean;
}

/** Every index the planner may choose (./indexes.ts); every backend must provide each one. */
export const ORDER_PATHS: { readonly [P in OrderPathName]: OrderAccessPath } = mapValues(
  ORDER_INDEXES,
  (i): OrderAccessPath => ({ name: i.path, dimensions: i.dimensions, liveOnly: i.liveOnly, referencedOnly: i.referencedOnly }),
);

/**
 * How many current orders hold a value, for the enum-like columns whose skew
 * the planner must see (a rare status among a million orders).
 */
export interface OrderStats {
  total: number;
  /** Current orders with that value; 0 for a value never seen. */
  count(dimension: 'status' | 'type' | 'timeInForce', value: number): number;
  live: number;
}

/** OrderStats from the rows of order_counts (dimension, value, number of current orders), as both backends keep them. */
export function orderStatsOf(
  rows: Iterable<readonly [dimension: string, value: number | bigint, n: number | bigint, ...rest: unknown[]]>,
): OrderStats {
  const counts = new Map<string, number>();
  let total = 0;
  for (const [dimension, value, n] of rows) {
    counts.set(`${dimension}:${value}`, Number(n));
    if (dimension === 'status') total += Number(n);
  }
  return {
    total,
    live: counts.get('live:1') ?? 0,
    count: (dimension, value) => counts.get(`${dimension}:${value}`) ?? 0,
  };
}

/**
 * A plan: scan `path` once per branch (values for its dimensions) within the
 * date range, keep rows matching `residual`.
 */
export interface OrderPlan {
  path: OrderAccessPath;
  branches: (string | number)[][];
  /** The filter minus what the path and the date range already guarantee. */
  residual: Omit<OrderFilter, 'dateRange'>;
  dateRange?: { start?: bigint; end?: bigint };
}

/** Ascending listing order of orders (oldest first): createdAt ascending, then id descending (./order-key.ts). */
function compareOrderKeys(a: OrderKey, b: OrderKey): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

function tighter(a: RangeEnd<OrderKey> | undefined, b: RangeEnd<OrderKey> | undefined, side: 1 | -1) {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const c = compareOrderKeys(a.key, b.key) * side;
  if (c !== 0) return c > 0 ? a : b;
  return a.inclusive ? b : a;
}

/**
 * A scan's key range narrowed by the createdAt date range, so the index range
 * itself stops at the dates instead of a filter checking each row. The
 * highest id comes first among the keys of one time: start <= createdAt is
 * (start, highest) <= key, and createdAt < end is key < (end, highest).
 */
export function orderKeyRange(scan: KeysetScan<OrderKey>, dateRange: OrderPlan['dateRange']): KeyRange<OrderKey> {
  const range = scanRange(scan);
  const start = dateRange?.start;
  const end = dateRange?.end;
  const first = (createdAt: bigint): OrderKey => ({ createdAt, id: HIGHEST_ORDER_ID });
  const lower = tighter(range.lower, start === undefined ? undefined : { key: first(start), inclusive: true }, 1);
  const upper = tighter(range.upper, end === undefined ? undefined : { key: first(end), inclusive: false }, -1);
  const out: KeyRange<OrderKey> = {};
  if (lower) out.lower = lower;
  if (upper) out.upper = upper;
  return out;
}

/**
 * Fractions of all orders assumed to share one id or reference. Ids have too
 * many values to count, and the few parties with many orders still hold a
 * small share of all orders.
 */
const ID_SELECTIVITY: Partial<Record<OrderDimension, number>> = {
  reference: 1e-6,
  partyId: 1e-2,
  marketId: 2e-2,
};

/** More branches than this cost more in merging than they save in scanning. */
export const MAX_BRANCHES = 64;

/**
 * Parameters a page's statements may bind at most: each arm binds the
 * residual filter's values again, and SQLite refuses a statement of more than
 * 32,766 (PostgreSQL, whose one statement holds the rows' and the check's
 * arms, 65,535). 64 branches of a 1,000-value residual list would be 64,000.
 */
export const MAX_PAGE_PARAMETERS = 30_000;

/** Parameters one arm binds beside its residual values: its pinned values, the key range's bounds, the limit. */
const ARM_PARAMETERS = 8;

/** Values the residual filter of a plan on `path` binds in each arm. */
function residualValues(f: OrderFilter, p: OrderAccessPath): number {
  const r = residualOf(f, p);
  return (r.statuses?.length ?? 0) + (r.types?.length ?? 0) + (r.timeInForces?.length ?? 0) +
    (r.partyIds?.length ?? 0) + (r.marketIds?.length ?? 0) + (r.reference === undefined ? 0 : 1);
}

/** Each extra branch is a separate index descent; weigh it like reading this many rows. */
const BRANCH_COST_ROWS = 20;

const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

/**
 * Drops filter values that liveOnly already rules out, so that branches are
 * not spent on them, and puts the date range on the microsecond grid that
 * createdAt is kept on, as the original does; returns undefined when nothing
 * can match at all.
 */
export function normalizeOrderFilter(filter: OrderFilter): OrderFilter | undefined {
  const f: OrderFilter = {};
  const list = <T>(xs: readonly T[] | undefined, keep: (x: T) => boolean = () => true): T[] | undefined | null => {
    if (xs === undefined) return undefined;
    const kept = unique(xs).filter(keep);
    return kept.length === 0 ? null : kept;
  };
  const live = filter.liveOnly === true;
  const statuses = list(filter.statuses, (s) => !live || LIVE_STATUSES.includes(s));
  const types = list(filter.types, (t) => !live || t === LIVE_TYPE);
  const tifs = list(filter.timeInForces, (t) => !live || !NOT_LIVE_TIME_IN_FORCES.includes(t));
  const partyIds = list(filter.partyIds);
  const marketIds = list(filter.marketIds);
  if (statuses === null || types === null || tifs === null || partyIds === null || marketIds === null) return undefined;
  if (statuses) f.statuses = statuses;
  if (types) f.types = types;
  if (tifs) f.timeInForces = tifs;
  if (partyIds) f.partyIds = partyIds;
  if (marketIds) f.marketIds = marketIds;
  if (filter.reference !== undefined) f.reference = filter.reference;
  if (filter.excludeLiquidity) f.excludeLiquidity = true;
  if (live) f.liveOnly = true;
  const start = filter.dateRange?.start === undefined ? undefined : toMicros(filter.dateRange.start);
  const end = filter.dateRange?.end === undefined ? undefined : toMicros(filter.dateRange.end);
  if (start !== undefined || end !== undefined) {
    if (start !== undefined && end !== undefined && start >= end) return undefined;
    f.dateRange = {};
    if (start !== undefined) f.dateRange.start = start;
    if (end !== undefined) f.dateRange.end = end;
  }
  return f;
}

function valuesOf(f: OrderFilter, d: OrderDimension): readonly (string | number)[] | undefined {
  switch (d) {
    case 'reference': return f.reference === undefined ? undefined : [f.reference];
    case 'partyId': return f.partyIds;
    case 'marketId': return f.marketIds;
    case 'status': return f.statuses;
    case 'type': return f.types;
    case 'timeInForce': return f.timeInForces;
  }
}

/** Share of all current orders an index range of `path` covers for these values. */
function estimatedShare(p: OrderAccessPath, f: OrderFilter, stats: OrderStats): number {
  const total = Math.max(stats.total, 1);
  let share = p.liveOnly ? stats.live / total : 1;
  for (const d of p.dimensions) {
    const values = valuesOf(f, d)!;
    const fixed = ID_SELECTIVITY[d];
    share *= fixed !== undefined
      ? Math.min(1, fixed * values.length)
      : values.reduce<number>((sum, v) => sum + stats.count(d as 'status' | 'type' | 'timeInForce', v as number), 0) / total;
  }
  return share;
}

function cartesian(lists: readonly (readonly (string | number)[])[]): (string | number)[][] {
  return lists.reduce<(string | number)[][]>((acc, values) => acc.flatMap((t) => values.map((v) => [...t, v])), [[]]);
}

function residualOf(f: OrderFilter, p: OrderAccessPath): OrderPlan['residual'] {
  const r: OrderFilter = { ...f };
  delete r.dateRange;
  for (const d of p.dimensions) {
    if (d === 'reference') delete r.reference;
    if (d === 'partyId') delete r.partyIds;
    if (d === 'marketId') delete r.marketIds;
    if (d === 'status') delete r.statuses;
    if (d === 'type') delete r.types;
    if (d === 'timeInForce') delete r.timeInForces;
  }
  if (p.liveOnly) delete r.liveOnly;
  return r;
}

/**
 * Picks the index that reads the fewest rows for this filter: every path whose
 * leading columns the filter pins down is a candidate, costed by the share of
 * orders its ranges cover plus a charge per branch. The time index always
 * qualifies, so a plan always exists unless nothing can match (undefined).
 */
export function planOrderQuery(filter: OrderFilter, stats: OrderStats): OrderPlan | undefined {
  const f = normalizeOrderFilter(filter);
  if (f === undefined) return undefined;
  let best: { plan: OrderPlan; cost: number } | undefined;
  for (const p of Object.values(ORDER_PATHS)) {
    if (p.liveOnly && !f.liveOnly) continue;
    if (p.referencedOnly && (f.reference === undefined || f.reference === '')) continue;
    const lists = p.dimensions.map((d) => valuesOf(f, d));
    if (lists.some((l) => l === undefined)) continue;
    const branches = cartesian(lists as (string | number)[][]);
    if (branches.length > MAX_BRANCHES) continue;
    // The rows' arms and the existence check's, each binding the residual values.
    if (2 * branches.length * (residualValues(f, p) + ARM_PARAMETERS) > MAX_PAGE_PARAMETERS) continue;
    const cost = estimatedShare(p, f, stats) * stats.total + branches.length * BRANCH_COST_ROWS;
    if (best === undefined || cost < best.cost) best = { plan: { path: p, branches, residual: residualOf(f, p) }, cost };
  }
  const plan = best!.plan;
  if (f.dateRange) plan.dateRange = f.dateRange;
  return plan;
}

// ---------------------------------------------------------------- bundles

export type { BundleDimension, BundlePathName } from './indexes.js';

export interface BundleAccessPath {
  readonly name: string;
  readonly dimension?: BundleDimension;
}

/** Every bundle index the planner may choose (./indexes.ts). */
export const BUNDLE_PATHS: { readonly [P in BundlePathName]: BundleAccessPath } = mapValues(
  BUNDLE_INDEXES,
  (i): BundleAccessPath => (i.dimension === undefined ? { name: i.path } : { name: i.path, dimension: i.dimension }),
);

export interface BundlePlan {
  path: BundleAccessPath;
  /** The value of path.dimension, when the path has one. */
  value?: string | bigint;
  residual: BundleFilter;
}

/**
 * Bundles are few (one per validator change), so a fixed preference is
 * enough: a validator has a handful of bundles, an epoch a few more, and a
 * submitter may have sent many.
 */
export function planBundleQuery(filter: BundleFilter): BundlePlan {
  const residual: BundleFilter = { ...filter };
  if (filter.nodeId !== undefined) {
    delete residual.nodeId;
    return { path: BUNDLE_PATHS.nodeId, value: filter.nodeId, residual };
  }
  if (filter.epochSeq !== undefined) {
    delete residual.epochSeq;
    return { path: BUNDLE_PATHS.epochSeq, value: filter.epochSeq, residual };
  }
  if (filter.submitter !== undefined) {
    delete residual.submitter;
    return { path: BUNDLE_PATHS.submitter, value: filter.submitter, residual };
  }
  return { path: BUNDLE_PATHS.time, residual };
}
