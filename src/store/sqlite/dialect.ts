/** SQLite's spelling of what ../sql-dialect.ts leaves to each backend. */
import type { SqlDialect } from '../sql-dialect.js';

export const SQLITE: SqlDialect = {
  // SQLite's planner has no statistics worth trusting here; ../plan.ts chooses, and the query says so.
  indexHint: (index) => ` INDEXED BY ${index}`,
  jsonString: (expression) => `json_quote(${expression})`,
  lowerHex: (expression) => `lower(hex(${expression}))`,
  // SQLite merges UNION ALL arms along their indexes as they are (MERGE (UNION ALL)).
  limitEachArm: false,
  textHoldsNul: true,
  historyOrder: { column: 'order_no', ofId: '(SELECT no FROM orders_current WHERE id_bytes = ?)' },
};
