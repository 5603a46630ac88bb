/**
 * A retention window's rules (docs/compatibility.md, section 13) applied to
 * the model's state (./model.ts), written from the rules alone: no code or
 * SQL of the store's pruning. Given a state and a window W:
 * - a block is older than W when its time is more than W before the last
 *   block's; the blocks kept start at the first that is not;
 * - an order that can still trade (ACTIVE or PARKED) keeps its current
 *   state and its latest history row, whatever their age;
 * - any other order is forgotten, current state and history, once the block
 *   of its last change is older than W;
 * - any other history row of a block older than W is forgotten;
 * - bundles and signatures are kept.
 */
import { STATUS_ACTIVE, STATUS_PARKED } from './model-enums.js';
import { lastBlockOf, latestRows, type HistoryRow, type ModelState } from './model.js';
import type { ModelOrder } from './model-types.js';

const canTrade = (o: ModelOrder) => o.status === STATUS_ACTIVE || o.status === STATUS_PARKED;

/** The state a store with window `windowNs` answers, once pruned at its last block. */
export function retain(state: ModelState, windowNs: bigint): ModelState {
  const last = lastBlockOf(state);
  if (last === undefined) return state;
  const times = new Map(state.blocks.map((b) => [b.height, b.time]));
  const older = (height: bigint) => last.time - times.get(height)! > windowNs;
  const latest = latestRows(state);
  const orders = new Map<string, ModelOrder>();
  for (const [id, order] of state.orders) {
    if (canTrade(order) || !older(latest.get(id)!.height)) orders.set(id, order);
  }
  const kept = new Set<HistoryRow>([...latest].filter(([id]) => orders.has(id)).map(([, row]) => row));
  const history = state.history.filter((row) => kept.has(row) || (orders.has(row.order.id.toLowerCase()) && !older(row.height)));
  return { ...state, orders, history, blocks: state.blocks.filter((b) => !older(b.height)) };
}
