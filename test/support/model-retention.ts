/**
 * A retention window's rules (docs/compatibility.md, section 13) applied to
 * the model's state (./model.ts), written from the rules alone: no code or
 * SQL of the store's pruning. Given a state and a window W:
 * - a block is older than W when its time is more than W before the last
 *   block's; the blocks kept start at the first that is not;
 * - an order that can still trade (ACTIVE or PARKED) keeps its current
 *   state and its latest version, whatever its age;
 * - any other order is forgotten, current state and versions, once the
 *   block of its last change is older than W;
 * - a version whose last state is in a block older than W is forgotten,
 *   unless it is its order's latest (its current state's version);
 * - bundles and signatures are kept.
 */
import { STATUS } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import type { ModelState, ReplayedBlock } from './model.js';

const canTrade = (o: Order) => o.status === STATUS.ACTIVE || o.status === STATUS.PARKED;

/** The state a store with window `windowNs` answers, once pruned at its last block. */
export function retain(state: ModelState, windowNs: bigint): ModelState {
  const last = state.lastBlock;
  if (last === undefined) return state;
  const older = (b: ReplayedBlock) => last.time - b.time > windowNs;
  const orders = new Map<string, Order>();
  const versions = new Map<string, Map<bigint, Order>>();
  const versionBlocks = new Map<string, Map<bigint, ReplayedBlock>>();
  for (const [id, order] of state.orders) {
    const blocksOf = state.versionBlocks.get(id)!;
    const lastChange = blocksOf.get(order.version)!;
    if (!canTrade(order) && older(lastChange)) continue;
    orders.set(id, order);
    const kept = new Map<bigint, Order>();
    const keptBlocks = new Map<bigint, ReplayedBlock>();
    for (const [version, o] of state.versions.get(id)!) {
      const at = blocksOf.get(version)!;
      if (older(at) && version !== order.version) continue;
      kept.set(version, o);
      keptBlocks.set(version, at);
    }
    versions.set(id, kept);
    versionBlocks.set(id, keptBlocks);
  }
  return { ...state, orders, versions, versionBlocks, blocks: state.blocks.filter((b) => !older(b)) };
}
