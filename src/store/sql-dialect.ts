/**
 * What the SQL of the two backends does not share. Everything else a page
 * query says (row-value keyset bounds, merged UNION ALL arms, the JSON each
 * node is built as) is written once, in ./page-sql.ts and ./node-json.ts, and
 * each backend hands in its dialect (./sqlite/dialect.ts, ./postgres/dialect.ts).
 * Queries are written with `?` placeholders; a backend that numbers its
 * parameters renumbers them when it prepares the statement.
 */
export interface SqlDialect {
  /** Text after `table AS alias` that makes the query scan this index; '' where the database's planner picks. */
  indexHint(index: string): string;
  /** A text expression as a JSON string, quoted and escaped. */
  jsonString(expression: string): string;
  /** A bytes expression as lower-case hexadecimal text. */
  lowerHex(expression: string): string;
  /**
   * Whether each arm of a merged page needs its own ORDER BY and LIMIT for
   * the database to merge the arms along their indexes rather than sort them.
   */
  limitEachArm: boolean;
  /**
   * Whether its text can hold U+0000. PostgreSQL's cannot (ingestion stops at
   * an event with one), so no stored text equals a value that has one, and
   * the database refuses such a value as a parameter.
   */
  textHoldsNul: boolean;
  /**
   * How history rows name their order: the column of orders_history they
   * hold it in, and the value of that column for the order whose id bytes
   * are the statement's parameter. PostgreSQL names it by its id; the
   * embedded store by the order's number (./sqlite/order-numbers.ts).
   */
  historyOrder: { column: string; ofId: string };
  /**
   * The condition on orders_current AS o that finds the order whose id bytes
   * are the statement's parameter: PostgreSQL's index by id, or the embedded
   * store's id levels (./sqlite/order-ids.ts).
   */
  currentOfId: string;
}
