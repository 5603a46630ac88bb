/**
 * The reads beside the listings, in SQL both backends take (? placeholders,
 * the JSON stand-ins of ./page-sql.ts): one order's current state, the last
 * state of one of its versions, a page of its versions, each block's
 * changes for the stream. States kept only in history are printed in
 * JavaScript (./order-node.ts), from the rows as ./history-row.ts reads them.
 */
import type { OrderVersionKey } from '../domain/order.js';
import type { BlockChanges, OrderChange } from '../domain/order-stream.js';
import type { PageRequest, PageRow } from '../domain/page.js';
import { HISTORY_ROW_COLUMNS, HISTORY_ROW_FROM, historyRowOrder, type HistoryRow } from './history-row.js';
import { ORDER_JSON_STANDIN } from './page-sql.js';
import { orderNodeJson } from './order-node.js';
import { planPage, scanRange, type KeyRange } from './plan.js';
import { u64, type SqlValue } from './rows.js';
import type { SqlDialect } from './sql-dialect.js';

export interface Statement {
  sql: string;
  params: SqlValue[];
}

/** The history columns, in this order, as a reader selecting them as an array gets them. */
export const HISTORY_ROW_NAMES = ['height', 'seq', 'id_bytes', 'version', 'message', 'market', 'party'] as const;

/** An array row of HISTORY_ROW_COLUMNS as a HistoryRow. */
export function historyRowOf(values: readonly unknown[]): HistoryRow {
  const row: Record<string, unknown> = {};
  HISTORY_ROW_NAMES.forEach((name, i) => (row[name] = values[i]));
  return row as unknown as HistoryRow;
}

const idBytes = (id: string) => Buffer.from(id, 'hex');

/** The current state of one order, as the list prints it. */
export function currentOrderStatement(dialect: SqlDialect, id: string): Statement {
  return {
    sql:
      `SELECT ${ORDER_JSON_STANDIN} AS json FROM orders_current AS o ` +
      `JOIN markets AS m ON m.no = o.market_no JOIN parties AS p ON p.no = o.party_no WHERE ${dialect.currentOfId}`,
    params: [idBytes(id)],
  };
}

/** History rows `h` of the order whose id bytes are the parameter. */
const ofOrder = ({ historyOrder: { column, ofId } }: SqlDialect) => `h.${column} = ${ofId}`;

/** The last state of one version of an order: its row of the highest block. */
export function versionStateStatement(dialect: SqlDialect, id: string, version: bigint): Statement {
  return {
    sql: `SELECT ${HISTORY_ROW_COLUMNS} FROM ${HISTORY_ROW_FROM} WHERE ${ofOrder(dialect)} AND h.version = ? ORDER BY h.height DESC LIMIT 1`,
    params: [idBytes(id), u64(version)],
  };
}

/** Each version's last state: no later row of the same version. */
const lastOfVersion = ({ historyOrder: { column } }: SqlDialect) =>
  `NOT EXISTS (SELECT 1 FROM orders_history_kept AS l WHERE l.${column} = h.${column} AND l.version = h.version AND l.height > h.height)`;

function versionRange(range: KeyRange<OrderVersionKey>, params: SqlValue[]): string[] {
  const out: string[] = [];
  if (range.lower) {
    out.push(`h.version ${range.lower.inclusive ? '>=' : '>'} ?`);
    params.push(u64(range.lower.key.version));
  }
  if (range.upper) {
    out.push(`h.version ${range.upper.inclusive ? '<=' : '<'} ?`);
    params.push(u64(range.upper.key.version));
  }
  return out;
}

/**
 * A page of one order's versions, highest first when newestFirst (the
 * original's order), each in its last state; and, with a cursor, whether a
 * version lies beyond it. Unlike the original's, oldest first does reverse the
 * list and `last`/`before` page backward (docs/compatibility.md, section 12.2).
 */
export function versionsStatements(
  dialect: SqlDialect, id: string, page: PageRequest<OrderVersionKey>,
): { rows: Statement; beyond?: Statement } {
  const scans = planPage(page);
  const rowParams: SqlValue[] = [idBytes(id)];
  const rowConditions = [ofOrder(dialect), ...versionRange(scanRange(scans.rows), rowParams), lastOfVersion(dialect)];
  const direction = scans.rows.direction === 'asc' ? 'ASC' : 'DESC';
  const rows: Statement = {
    sql: `SELECT ${HISTORY_ROW_COLUMNS} FROM ${HISTORY_ROW_FROM} WHERE ${rowConditions.join(' AND ')} ORDER BY h.version ${direction} LIMIT ?`,
    params: [...rowParams, scans.rows.limit],
  };
  if (scans.beyond === undefined) return { rows };
  const beyondParams: SqlValue[] = [idBytes(id)];
  const beyondConditions = [ofOrder(dialect), ...versionRange(scanRange(scans.beyond), beyondParams)];
  return { rows, beyond: { sql: `SELECT 1 FROM orders_history_kept AS h WHERE ${beyondConditions.join(' AND ')} LIMIT 1`, params: beyondParams } };
}

/** A version's row as a page row: the node the list would print for that state, keyed by its version. */
export function versionPageRow(row: HistoryRow): PageRow<OrderVersionKey> {
  const order = historyRowOrder(row);
  return { json: orderNodeJson(order), key: { id: order.id.toLowerCase(), version: BigInt(row.version) } };
}

/**
 * The rows of the blocks after `after` up to `upTo`, of at most `maxBlocks`
 * blocks that changed an order, in (height, seq) order: the original's order
 * within a block.
 */
export function changesStatement(after: bigint, upTo: bigint, maxBlocks: number): Statement {
  return {
    sql:
      `SELECT ${HISTORY_ROW_COLUMNS} FROM ${HISTORY_ROW_FROM} WHERE h.height > ? AND h.height <= (` +
      'SELECT max(height) FROM (SELECT DISTINCT height FROM orders_history_kept WHERE height > ? AND height <= ? ORDER BY height LIMIT ?) AS b' +
      ') ORDER BY h.height, h.seq',
    params: [u64(after), u64(after), u64(upTo), maxBlocks],
  };
}

/** The first block stored: the history of every block from it on is kept. */
export const FIRST_BLOCK_SQL = 'SELECT min(height) FROM blocks';

/** Rows in (height, seq) order as each block's changes. */
export function blockChangesOf(rows: readonly HistoryRow[]): BlockChanges[] {
  const blocks: BlockChanges[] = [];
  let current: BlockChanges | undefined;
  for (const row of rows) {
    const height = BigInt(row.height);
    if (current === undefined || current.height !== height) {
      current = { height, changes: [] };
      blocks.push(current);
    }
    const order = historyRowOrder(row);
    const change: OrderChange = { node: orderNodeJson(order), marketId: order.marketId.toLowerCase(), partyId: order.partyId.toLowerCase() };
    current.changes.push(change);
  }
  return blocks;
}
