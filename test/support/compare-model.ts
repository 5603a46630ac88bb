/**
 * Every read a store answers, against the model's answer for the same
 * blocks (./model.ts, with a retention's rules applied or not): the lists
 * under every filter the data makes interesting, walked both ways in both
 * orders; each order ever seen (forgotten ones too), at each version ever
 * seen and beyond; each order's versions, walked; the bundles; the stream's
 * changes from the first block it serves, and that first block. The
 * stream's snapshot is the list's live orders, compared under the live
 * filters.
 */
import assert from 'node:assert/strict';
import type { BundleFilter, BundleKey } from '../../src/domain/bundle.js';
import { STATUS, TYPE } from '../../src/domain/enums.js';
import type { OrderFilter, OrderKey, OrderVersionKey } from '../../src/domain/order.js';
import type { Page, PageRequest } from '../../src/domain/page.js';
import type { QueryStore } from '../../src/store/store.js';
import { orderVersions, type ModelState } from './model.js';

const text = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x));

/** Every row of a listing, page by page, forward or backward, as (json, key) text. */
async function walk<K>(list: (page: PageRequest<K>) => Promise<Page<K>>, newestFirst: boolean, size: number, backward: boolean): Promise<string[]> {
  const out: string[][] = [];
  let cursor: K | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const request: PageRequest<K> = { newestFirst, mode: backward ? 'last' : 'first', limit: size };
    if (cursor !== undefined) request.cursor = cursor;
    const page = await list(request);
    out.push(page.rows.map((r) => `${r.json} ${text(r.key)}`));
    const more = backward ? page.hasPreviousPage : page.hasNextPage;
    if (!more || page.rows.length === 0) break;
    cursor = (backward ? page.rows[0] : page.rows.at(-1))!.key;
  }
  if (backward) out.reverse();
  return out.flat();
}

async function sameWalks<K>(what: string, store: (p: PageRequest<K>) => Promise<Page<K>>, model: (p: PageRequest<K>) => Promise<Page<K>>, sizes: readonly number[]): Promise<void> {
  for (const newestFirst of [true, false]) {
    for (const backward of [false, true]) {
      for (const size of sizes) {
        assert.deepEqual(await walk(store, newestFirst, size, backward), await walk(model, newestFirst, size, backward),
          `${what}: newestFirst=${newestFirst} ${backward ? 'last/before' : 'first/after'} ${size}`);
      }
    }
  }
}

/** Filters of every shape, with values taken from `everything` (the state before any pruning). */
function orderFilters(everything: ModelState): OrderFilter[] {
  const orders = [...everything.orders.values()];
  const distinct = <T>(values: T[]) => [...new Set(values)];
  const markets = distinct(orders.map((o) => o.marketId.toLowerCase())).slice(0, 4);
  const parties = distinct(orders.map((o) => o.partyId.toLowerCase())).slice(0, 4);
  const references = distinct(orders.map((o) => o.reference).filter((r) => r !== '')).slice(0, 2);
  const times = orders.map((o) => o.createdAt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const middle = times[Math.floor(times.length / 2)] ?? 0n;
  return [
    {}, { liveOnly: true }, { excludeLiquidity: true },
    ...distinct(orders.map((o) => o.status)).map((s) => ({ statuses: [s] })),
    { statuses: [STATUS.ACTIVE, STATUS.PARKED] }, { types: [TYPE.LIMIT] }, { types: [TYPE.NETWORK, TYPE.MARKET] },
    { timeInForces: [1] }, { timeInForces: [2, 3] },
    ...markets.flatMap((m) => [{ marketIds: [m] }, { marketIds: [m], liveOnly: true }]),
    ...parties.flatMap((p) => [{ partyIds: [p] }, { partyIds: [p], liveOnly: true }]),
    ...references.map((reference) => ({ reference })),
    { dateRange: { start: middle } }, { dateRange: { end: middle } },
  ];
}

/**
 * Asserts that `store` answers as `model` does (the model, or another store
 * taken as the reference). `everything` is the model's state before
 * pruning: the orders, versions and filters to ask about; `everyNthOrder`
 * asks about one order in so many, for a large network.
 */
export async function assertAnswersAsModel(
  store: QueryStore, model: QueryStore, everything: ModelState, what: string, { everyNthOrder = 1 }: { everyNthOrder?: number } = {},
): Promise<void> {
  // Small pages for the shapes whose cursors matter most; whole pages (at most 5000 rows) for the rest.
  const filters = orderFilters(everything);
  for (const [i, filter] of filters.entries()) {
    await sameWalks<OrderKey>(`${what}: orders ${text(filter)}`, (p) => store.listOrders(filter, p), (p) => model.listOrders(filter, p), i < 3 ? [7, 5000] : [5000]);
  }
  const bundleFilters: BundleFilter[] = [{}];
  for (const filter of bundleFilters) {
    await sameWalks<BundleKey>(`${what}: bundles`, (p) => store.listBundles(filter, p), (p) => model.listBundles(filter, p), [2, 1000]);
    await sameWalks<BundleKey>(`${what}: removed bundles`, (p) => store.listRemovedBundles(filter, p), (p) => model.listRemovedBundles(filter, p), [2, 1000]);
  }
  let walked = 0;
  let nth = 0;
  for (const [id, versions] of orderVersions(everything)) {
    if (nth++ % everyNthOrder !== 0) continue;
    assert.deepEqual(await store.getOrder(id), await model.getOrder(id), `${what}: order ${id}`);
    for (const version of [...versions.keys(), 99n]) {
      assert.deepEqual(await store.getOrder(id, version), await model.getOrder(id, version), `${what}: order ${id} version ${version}`);
    }
    // Every order's versions as one page; page by page for the first amended ones.
    const sizes = versions.size > 1 && walked++ < 40 ? [1, 1000] : [1000];
    await sameWalks<OrderVersionKey>(`${what}: versions of ${id}`, (p) => store.listOrderVersions(id, p), (p) => model.listOrderVersions(id, p), sizes);
  }
  const first = await model.firstChangeHeight();
  assert.equal(await store.firstChangeHeight(), first, `${what}: the first block whose changes are served`);
  const last = (await model.lastBlock())?.height ?? 0n;
  assert.deepEqual(await store.orderChanges(first - 1n, last, 1_000_000), await model.orderChanges(first - 1n, last, 1_000_000), `${what}: changes`);
  assert.deepEqual(await store.lastBlock(), await model.lastBlock(), `${what}: last block`);
}
