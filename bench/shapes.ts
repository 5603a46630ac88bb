/**
 * What `npm run bench` asks: the query shapes (filter values read off the
 * store itself), the pools of cursors for "random" pages, and the matrix of
 * cases, each a list of request paths.
 */
import { bundleCursors, orderCursors } from '../src/api/cursor.js';
import { readOrderFilter } from '../src/api/read-parameters.js';
import { readQuery } from '../src/api/query.js';
import type { OrderFilter, OrderKey } from '../src/domain/order.js';
import type { QueryStore } from '../src/store/store.js';

export const ORDERS = '/api/v2/orders';
export const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';
/** GET /api/v2/order/{id}: one order, its id the rest of the path. */
export const ORDER = '/api/v2/order/';

export interface Shape {
  name: string;
  endpoint: typeof ORDERS | typeof BUNDLES | typeof ORDER;
  /** Filter parameters, without paging. */
  query: string;
}

export interface Case {
  shape: Shape;
  newestFirst: boolean;
  backward: boolean;
  pageSize: number;
  /**
   * 'random': each request the next page of the shape's cursor pool (400;
   * for the order by id, the next of 400 ids);
   * 'wide': the same from a pool larger than the server's answer cache can
   * hold (4000), so every answer is computed; 'first': the same first page
   * again and again.
   */
  cursors: 'random' | 'wide' | 'first';
  gzip: boolean;
  /** Measured on a server started with --answer-cache-mb 0: every answer computed. */
  uncached?: boolean;
}

/** The fields of an order node the shapes are chosen from. */
interface SampledOrder {
  partyId: string;
  marketId: string;
  status: string;
  type: string;
  timeInForce: string;
  reference: string;
}

function mostCommon<T>(items: readonly T[], key: (t: T) => string | undefined): string | undefined {
  const counts = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** Oldest and newest createdAt among the orders a filter matches. */
async function timeSpan(store: QueryStore, filter: OrderFilter): Promise<[bigint, bigint] | undefined> {
  const newest = (await store.listOrders(filter, { newestFirst: true, mode: 'first', limit: 1 })).rows[0];
  const oldest = (await store.listOrders(filter, { newestFirst: false, mode: 'first', limit: 1 })).rows[0];
  return newest && oldest ? [oldest.key.createdAt, newest.key.createdAt] : undefined;
}

/**
 * `count` times evenly spread over the filter's orders' span, each as the
 * exclusive end of a date range within the filter's own: the newest order
 * before each is a point spread evenly through the listing, reached by one
 * index range scan instead of a walk through every page before it.
 */
async function spreadKeys(store: QueryStore, filter: OrderFilter, count: number, perPoint: number): Promise<{ key: OrderKey; json: string }[]> {
  const span = await timeSpan(store, filter);
  if (span === undefined) return [];
  const [lo, hi] = span;
  const rows: { key: OrderKey; json: string }[] = [];
  for (let k = 0; k < count; k++) {
    const at = lo + ((hi - lo) * BigInt(2 * k + 1)) / BigInt(2 * count);
    const end = filter.dateRange?.end !== undefined && filter.dateRange.end < at ? filter.dateRange.end : at;
    const dateRange = { ...filter.dateRange, end };
    const page = await store.listOrders({ ...filter, dateRange }, { newestFirst: true, mode: 'first', limit: perPoint });
    rows.push(...page.rows);
  }
  return rows;
}

/** A deterministic shuffle, so two runs ask the same pages in the same order. */
export function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  let seed = 42;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Filter values read off a sample of the store's orders spread over its whole history. */
export async function chooseShapes(store: QueryStore): Promise<Shape[]> {
  const sample = (await spreadKeys(store, {}, 200, 25)).map((r) => JSON.parse(r.json) as SampledOrder);
  if (sample.length === 0) throw new Error('the store holds no orders');
  const party = mostCommon(sample, (o) => (o.partyId === 'network' ? undefined : o.partyId))!;
  const market = mostCommon(sample, (o) => o.marketId)!;
  const status = mostCommon(sample, (o) => o.status)!;
  const reference = mostCommon(sample, (o) => o.reference || undefined);
  const [type, tif] = mostCommon(sample, (o) => `${o.type} ${o.timeInForce}`)!.split(' ');
  const [pmMarket, pmStatus] = mostCommon(sample, (o) => (o.partyId === party ? `${o.marketId} ${o.status}` : undefined))!.split(' ');
  const [lo, hi] = (await timeSpan(store, {}))!;
  // The middle tenth of the history: a range that starts and ends inside the data.
  const start = lo + ((hi - lo) * 45n) / 100n;
  const end = lo + ((hi - lo) * 55n) / 100n;
  const shapes: Shape[] = [
    { name: 'no filter', endpoint: ORDERS, query: '' },
    { name: 'party', endpoint: ORDERS, query: `filter.partyIds=${party}` },
    { name: 'market', endpoint: ORDERS, query: `filter.marketIds=${market}` },
    { name: `status common (${status})`, endpoint: ORDERS, query: `filter.statuses=${status}` },
    { name: 'status rare (REJECTED, PARKED)', endpoint: ORDERS, query: 'filter.statuses=STATUS_REJECTED&filter.statuses=STATUS_PARKED' },
    { name: 'type + timeInForce', endpoint: ORDERS, query: `filter.types=${type}&filter.timeInForces=${tif}` },
    { name: 'dateRange (middle 10%)', endpoint: ORDERS, query: `filter.dateRange.startTimestamp=${start}&filter.dateRange.endTimestamp=${end}` },
    { name: 'liveOnly', endpoint: ORDERS, query: 'filter.liveOnly=true' },
    { name: 'excludeLiquidity', endpoint: ORDERS, query: 'filter.excludeLiquidity=true' },
    { name: 'party + market + status', endpoint: ORDERS, query: `filter.partyIds=${party}&filter.marketIds=${pmMarket}&filter.statuses=${pmStatus}` },
    { name: 'bundles', endpoint: BUNDLES, query: '' },
    { name: 'order by id', endpoint: ORDER, query: '' },
  ];
  if (reference !== undefined) {
    shapes.splice(5, 0, { name: 'reference', endpoint: ORDERS, query: `filter.reference=${encodeURIComponent(reference)}` });
  }
  return shapes;
}

/**
 * Up to `size` cursors of real rows spread evenly through the shape's listing
 * (fewer when it has fewer rows), shuffled. A cursor is a position, not a
 * direction, so one pool serves both orderings and both directions.
 */
export async function cursorPool(store: QueryStore, shape: Shape, size: number): Promise<string[]> {
  if (shape.endpoint === ORDER) {
    // Ids of orders spread evenly through the store's history.
    const rows = await spreadKeys(store, {}, size, 1);
    return shuffled([...new Set(rows.map((r) => (JSON.parse(r.json) as { id: string }).id))]);
  }
  if (shape.endpoint === BUNDLES) {
    // Bundles are few (about one per thousand orders) and have no date filter: walked whole.
    const keys: string[] = [];
    let cursor;
    for (;;) {
      const page = await store.listBundles({}, { newestFirst: true, mode: 'first', limit: 5000, cursor });
      keys.push(...page.rows.map((r) => bundleCursors.encode(r.key)));
      if (!page.hasNextPage || page.rows.length === 0) break;
      cursor = page.rows.at(-1)!.key;
    }
    const step = Math.max(1, keys.length / size);
    const picked = new Set<string>();
    for (let i = 0; i < keys.length && picked.size < size; i += step) picked.add(keys[Math.floor(i)]!);
    return shuffled([...picked]);
  }
  const filter = readOrderFilter(readQuery(`${ORDERS}?${shape.query}`));
  const rows = await spreadKeys(store, filter, size, 1);
  return shuffled([...new Set(rows.map((r) => orderCursors.encode(r.key)))]);
}

/** The request paths of a case: one per cursor of the pool, or the first page alone. */
export function casePaths(c: Case, pool: readonly string[]): string[] {
  if (c.shape.endpoint === ORDER) return (c.cursors === 'first' ? pool.slice(0, 1) : pool).map((id) => `${ORDER}${id}`);
  const base = `${c.shape.endpoint}?${c.shape.query}${c.shape.query ? '&' : ''}` +
    (c.newestFirst ? '' : 'pagination.newestFirst=false&') +
    `pagination.${c.backward ? 'last' : 'first'}=${c.pageSize}`;
  if (c.cursors === 'first' || pool.length === 0) return [base];
  return pool.map((cursor) => `${base}&pagination.${c.backward ? 'before' : 'after'}=${cursor}`);
}

/**
 * Every dimension at least once, against the default (page 50, newest first,
 * forward, random cursors, no gzip): every shape both directions, then one
 * dimension at a time on 'no filter' and on 'party'. Crossing them all would
 * take hours.
 */
export function matrix(shapes: readonly Shape[]): Case[] {
  const base = { newestFirst: true, backward: false, pageSize: 50, cursors: 'random', gzip: false } as const;
  const cases: Case[] = [];
  for (const shape of shapes.filter((s) => s.endpoint !== ORDER)) {
    cases.push({ ...base, shape });
    cases.push({ ...base, shape, backward: true });
  }
  for (const shape of shapes.filter((s) => s.name === 'no filter' || s.name === 'party')) {
    cases.push({ ...base, shape, newestFirst: false });
    cases.push({ ...base, shape, pageSize: 1000 });
    cases.push({ ...base, shape, cursors: 'wide' });
    cases.push({ ...base, shape, cursors: 'first' });
    cases.push({ ...base, shape, gzip: true });
    cases.push({ ...base, shape, cursors: 'first', gzip: true });
  }
  // One order by id: the same one again, ids rotated (kept by the answer cache once seen), and rotated with no cache at all.
  for (const shape of shapes.filter((s) => s.endpoint === ORDER)) {
    const one = { ...base, shape, pageSize: 1 };
    cases.push({ ...one, cursors: 'first' });
    cases.push(one);
    cases.push({ ...one, uncached: true });
  }
  return cases;
}

/** How a case reads in the table. */
export function describeCase(c: Case): string[] {
  const cursors = `${c.shape.endpoint === ORDER ? (c.cursors === 'first' ? 'same id' : 'random ids') : c.cursors}${c.uncached ? ', cache 0' : ''}`;
  if (c.shape.endpoint === ORDER) return [c.shape.name, '-', '-', String(c.pageSize), cursors, c.gzip ? 'gzip' : '-'];
  return [c.shape.name, c.newestFirst ? 'newest' : 'oldest', c.backward ? 'back' : 'fwd', String(c.pageSize), cursors, c.gzip ? 'gzip' : '-'];
}
