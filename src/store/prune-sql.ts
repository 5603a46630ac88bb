/**
 * The rules of retention (docs/compatibility.md, section 13) as SQL both
 * backends take, for their pruners (./sqlite/pruner.ts,
 * ./postgres/pruner.ts). `h` is a history row being pruned, `o` its
 * order's current state.
 */
import { LIVE_STATUSES } from '../domain/order.js';

/** The statuses of an order that can still trade: it is kept, whatever its age. */
export const CAN_TRADE = `(${LIVE_STATUSES.join(', ')})`;

/**
 * `h` is its order's latest row, the one its current state `o` was written
 * with: of the current version, and no later row of that version (a
 * version's rows only ever follow each other; a later version would be the
 * current one). `column` is the one history rows name their order by
 * (SqlDialect.historyOrder).
 */
export const isLatest = (column: string): string => `o.version = h.version AND ${noLaterRow(column)}`;

/** No row of `h`'s order and version follows `h`: a probe of the history index by order. */
export const noLaterRow = (column: string): string =>
  `NOT EXISTS (SELECT 1 FROM orders_history l WHERE l.${column} = h.${column} AND l.version = h.version AND l.height > h.height)`;

/** The columns of orders_current that order_counts counts, by the planner's dimension names. */
export const COUNTED_DIMENSIONS = [['status', 'status'], ['type', 'type'], ['timeInForce', 'time_in_force'], ['live', 'live']] as const;

