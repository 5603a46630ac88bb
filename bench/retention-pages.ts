/**
 * Page-50 latency of a store's own reads (no answer cache: every page read
 * from the store), for three filter shapes, each from random cursors
 * between the oldest and the newest order: the retention benchmark's pages.
 */
import { randomBytes } from 'node:crypto';
import type { OrderFilter, OrderKey } from '../src/domain/order.js';
import type { QueryStore } from '../src/store/store.js';

export interface ShapeP99 {
  all: number;
  market: number;
  party: number;
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;

/** p99 in ms of `n` pages of 50 rows for each shape. */
export async function pageP99s(store: QueryStore, n: number): Promise<ShapeP99> {
  const newest = (await store.listOrders({}, { newestFirst: true, mode: 'first', limit: 1 })).rows[0];
  const oldest = (await store.listOrders({}, { newestFirst: false, mode: 'first', limit: 1 })).rows[0];
  if (newest === undefined || oldest === undefined) return { all: NaN, market: NaN, party: NaN };
  const node = JSON.parse(newest.json) as { marketId: string; partyId: string };
  const span = Number(newest.key.createdAt - oldest.key.createdAt);
  const cursor = (): OrderKey => ({
    createdAt: oldest.key.createdAt + BigInt(Math.floor(Math.random() * span)), id: randomBytes(32).toString('hex'),
  });
  const shapes: Record<keyof ShapeP99, OrderFilter> = { all: {}, market: { marketIds: [node.marketId] }, party: { partyIds: [node.partyId] } };
  const out = {} as ShapeP99;
  for (const [name, filter] of Object.entries(shapes) as [keyof ShapeP99, OrderFilter][]) {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await store.listOrders(filter, { newestFirst: i % 2 === 0, mode: 'first', limit: 50, cursor: cursor() });
      times.push(performance.now() - t);
    }
    out[name] = p99(times);
  }
  return out;
}
