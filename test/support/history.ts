/**
 * History rows as both backends hold them, each with the Order message it
 * stands for: the stored bytes with the ids the row numbers put back, by the
 * module readers use (src/store/history-row.ts).
 */
import { HISTORY_ROW_COLUMNS, HISTORY_ROW_FROM, historyRowMessage, type HistoryRow, type StoredMessage } from '../../src/store/history-row.js';

/**
 * Each history row (its block's height, its position in the block's rows,
 * the order's id and version) with the market and party its numbers stand
 * for (NULL: the message is kept whole).
 */
export const HISTORY_SQL = `SELECT ${HISTORY_ROW_COLUMNS} FROM ${HISTORY_ROW_FROM}`;

export interface StoredHistoryRow extends HistoryRow {
  id_bytes: Buffer;
  message: Buffer;
}

/** The message a row of HISTORY_SQL (or of an earlier schema's history) stands for. */
export const restoredMessage = (row: StoredMessage): Buffer => historyRowMessage(row);

/** A row as `height/seq id version`, the same text from either backend. */
export const rowKey = (row: StoredHistoryRow): string =>
  `${row.height}/${row.seq} ${row.id_bytes.toString('hex')} v${row.version}`;
