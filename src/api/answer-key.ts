/**
 * The normalised form of a page request, the answer cache's key: two requests
 * with the same key get the same answer, however they were spelled (snake_case
 * or lowerCamel, keys in any order, list values in any order or repeated,
 * defaults left out or given). Built from the parsed request, so only what
 * the answer depends on is in it.
 */
import type { BundleFilter } from '../domain/bundle.js';
import type { OrderFilter } from '../domain/order.js';
import type { PageRequest } from '../domain/page.js';
import type { CursorCodec } from './cursor.js';

const sortedSet = <T extends string | number>(xs: readonly T[] | undefined): T[] | undefined =>
  xs === undefined ? undefined : [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** bigint as text, so that JSON.stringify can write it. */
const text = (v: bigint | undefined) => (v === undefined ? undefined : v.toString());

function pageKey<K>(page: PageRequest<K>, cursors: CursorCodec<K>): unknown[] {
  return [page.newestFirst, page.mode, page.limit, page.cursor === undefined ? null : cursors.encode(page.cursor)];
}

export function orderAnswerKey<K>(filter: OrderFilter, page: PageRequest<K>, cursors: CursorCodec<K>, pretty: boolean): string {
  return JSON.stringify([
    'orders',
    sortedSet(filter.statuses) ?? null,
    sortedSet(filter.types) ?? null,
    sortedSet(filter.timeInForces) ?? null,
    sortedSet(filter.partyIds) ?? null,
    sortedSet(filter.marketIds) ?? null,
    filter.reference ?? null,
    text(filter.dateRange?.start) ?? null,
    text(filter.dateRange?.end) ?? null,
    // false and absent are one filter: neither keeps anything out.
    filter.excludeLiquidity === true,
    filter.liveOnly === true,
    ...pageKey(page, cursors),
    pretty,
  ]);
}

export function bundleAnswerKey<K>(filter: BundleFilter, page: PageRequest<K>, cursors: CursorCodec<K>, pretty: boolean): string {
  return JSON.stringify([
    'bundles', filter.nodeId ?? null, filter.submitter ?? null, text(filter.epochSeq) ?? null, ...pageKey(page, cursors), pretty,
  ]);
}
