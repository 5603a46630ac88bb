/**
 * History rows as both backends hold them, each with the Order message it
 * stands for: the stored bytes with the ids the row numbers put back.
 */
import { historyMessage } from '../../src/store/history-message.js';

/**
 * Each history row (its block's height, its position in the block's rows,
 * the order's id and version) with the market and party its numbers stand
 * for (NULL: the message is kept whole).
 */
export const HISTORY_SQL = `SELECT h.height, h.seq, h.id_bytes, h.version, h.message, m.id AS market, p.id AS party
  FROM orders_history h LEFT JOIN markets m ON m.no = h.market_no LEFT JOIN parties p ON p.no = h.party_no`;

export interface StoredHistoryRow {
  /** bigint from SQLite, decimal text from PostgreSQL (NUMERIC), as are versions. */
  height: bigint | string;
  seq: bigint | number;
  id_bytes: Buffer;
  version: bigint | string;
  message: Buffer;
  market: string | null;
  party: string | null;
}

/** The message a row of HISTORY_SQL (or of an earlier schema's history) stands for. */
export function restoredMessage(row: Pick<StoredHistoryRow, 'id_bytes' | 'message' | 'market' | 'party'>): Buffer {
  if (row.market === null || row.party === null) {
    if (row.market !== row.party) throw new Error('a history row numbers its market but not its party, or the other way round');
    return historyMessage(row.message, undefined);
  }
  return historyMessage(row.message, { id: row.id_bytes.toString('hex'), market: row.market, party: row.party });
}

/** A row as `height/seq id version`, the same text from either backend. */
export const rowKey = (row: StoredHistoryRow): string =>
  `${row.height}/${row.seq} ${row.id_bytes.toString('hex')} v${row.version}`;
