/** SQLite's spelling of what ../sql-dialect.ts leaves to each backend. */
import type { SqlDialect } from '../sql-dialect.js';
import { ORDER_NO_OF_ID } from './order-ids.js';

export const SQLITE: SqlDialect = {
  // SQLite's planner has no statistics worth trusting here; ../plan.ts chooses, and the query says so.
  indexHint: (index) => ` INDEXED BY ${index}`,
  jsonString: (expression) => `json_quote(${expression})`,
  lowerHex: (expression) => `lower(hex(${expression}))`,
  // SQLite merges UNION ALL arms along their indexes as they are (MERGE (UNION ALL)).
  limitEachArm: false,
  textHoldsNul: true,
  historyOrder: { column: 'order_no', ofId: ORDER_NO_OF_ID },
  currentOfId: `o.no = ${ORDER_NO_OF_ID}`,
};
