/** PostgreSQL's spelling of what ../sql-dialect.ts leaves to each backend. */
import type { SqlDialect } from '../sql-dialect.js';

export const POSTGRES: SqlDialect = {
  // No hints: PostgreSQL's planner picks the index from its statistics; the EXPLAIN tests check it does.
  indexHint: () => '',
  jsonString: (expression) => `to_json(${expression})::text`,
  lowerHex: (expression) => `encode(${expression}, 'hex')`,
  // PostgreSQL (18) appends the arms of a bare UNION ALL and sorts them; arms
  // ordered and limited each are read along their indexes and merged (Merge Append).
  limitEachArm: true,
  textHoldsNul: false,
  historyOrder: { column: 'id_bytes', ofId: '?' },
  currentOfId: 'o.id_bytes = ?',
};

/** A statement written with `?` placeholders (../page-sql.ts), with PostgreSQL's numbered ones. */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  // Our statements hold no `?` in a literal or identifier: every one is a placeholder.
  return sql.replace(/\?/g, () => `$${++n}`);
}
