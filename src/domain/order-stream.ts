/**
 * What the stream of orders (GET /api/v2/stream/orders) asks the store for:
 * the live orders a filter matches, and each block's changes.
 */

/** What a subscriber asks for; empty lists mean "no filter". Ids as the client gave them. */
export interface StreamFilter {
  marketIds: readonly string[];
  partyIds: readonly string[];
  excludeLiquidity: boolean;
}

/** One order state a block changed, as the list shows it, with what the updates' filter compares. */
export interface OrderChange {
  /** The list's node (unary JSON). */
  node: string;
  /** Lower case, as stored. */
  marketId: string;
  partyId: string;
}

export interface BlockChanges {
  height: bigint;
  /** In the order the original batches them: each (order, version) once, where its last update in the block was. */
  changes: OrderChange[];
}

/** The live orders a filter matches, in the list's order, read in one snapshot with the height of its last block (0 before any). */
export interface LiveOrders {
  height: bigint;
  nodes: string[];
}
