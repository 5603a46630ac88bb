/** What the stream hub (./hub.ts) reads, from a QueryStore. */
import type { StreamFilter } from '../../domain/order-stream.js';
import type { QueryStore } from '../../store/store.js';
import type { OrderStreamSource } from './hub.js';

/** The snapshot is one query without a limit, as the original's (docs/compatibility.md, section 12.4). */
const SNAPSHOT_LIMIT = Number.MAX_SAFE_INTEGER - 1;

const idsOrNone = (ids: readonly string[]) => (ids.length === 0 ? undefined : [...new Set(ids.map((id) => id.toLowerCase()))]);

export function streamSource(store: QueryStore): OrderStreamSource {
  return {
    async liveOrders(filter: StreamFilter) {
      // The list's live orders, in its newest-first order, which is the snapshot's; its ids compared
      // as bytes, so whatever their case (the updates compare them as given).
      const page = await store.listOrders(
        {
          liveOnly: true, marketIds: idsOrNone(filter.marketIds), partyIds: idsOrNone(filter.partyIds),
          ...(filter.excludeLiquidity ? { excludeLiquidity: true } : {}),
        },
        { newestFirst: true, mode: 'first', limit: SNAPSHOT_LIMIT },
      );
      return { height: page.lastBlock?.height ?? 0n, nodes: page.rows.map((r) => r.json) };
    },
    orderChanges: (after, upTo, maxBlocks) => store.orderChanges(after, upTo, maxBlocks),
    lastHeight: async () => (await store.lastBlock())?.height ?? 0n,
    firstChangeHeight: () => store.firstChangeHeight(),
  };
}
