/**
 * A row of orders_history back to the Order it holds, the same on both
 * backends: what the readers of one order's history (GET
 * /api/v2/order/{id}?version=N, /api/v2/order/versions/{id}) and of each
 * block's changes (the order stream) need, and no query of their own.
 *
 * The table (schema: the embedded store's version 7, PostgreSQL's migration
 * 4) holds one row per order, version and block, keyed by (height, seq):
 * the block's height and the row's position in that block's changes, in the
 * original's order (each (order, version) at its last update in the block).
 * The unique index orders_history_by_order (./indexes.ts,
 * HISTORY_BY_ORDER_INDEX) finds an order's rows by (id_bytes, version,
 * height). A row's message is the network's Order message less its leading
 * ids where market_no and party_no are set (./history-message.ts): the
 * reader joins the markets and parties tables for them, as HISTORY_ROW_FROM
 * does, and this module puts them back.
 */
import type { Order } from '../domain/order.js';
import { InternalError } from '../errors.js';
import { decodeOrder } from '../wire/order-message.js';
import { historyMessage } from './history-message.js';
import { ORDER_ID_BYTES } from './order-key.js';

/**
 * The columns a reader selects, SQL both backends take, with the
 * market and party ids the row's numbers stand for; `h` is orders_history_kept,
 * history as readers see it: what the store's retention keeps (schema: the
 * embedded store's version 8, PostgreSQL's migration 5).
 */
export const HISTORY_ROW_COLUMNS = 'h.height, h.seq, h.id_bytes, h.version, h.message, m.id AS market, p.id AS party';

/** The FROM clause that goes with HISTORY_ROW_COLUMNS. */
export const HISTORY_ROW_FROM =
  'orders_history_kept h LEFT JOIN markets m ON m.no = h.market_no LEFT JOIN parties p ON p.no = h.party_no';

/**
 * A row as HISTORY_ROW_COLUMNS reads it. The embedded store gives heights
 * and versions as bigint (decimal text beyond 2^63, as it keeps every
 * unsigned 64-bit value), PostgreSQL as NUMERIC's decimal text.
 */
export interface HistoryRow {
  height: bigint | string;
  seq: bigint | number;
  id_bytes: Uint8Array;
  version: bigint | string;
  message: Uint8Array;
  /** The market's id; null where the message was kept whole. */
  market: string | null;
  /** The party's id; null where the message was kept whole. */
  party: string | null;
}

/** What historyRowMessage() needs of a row: any schema's history row, and a reader's own selection. */
export type StoredMessage = Pick<HistoryRow, 'id_bytes' | 'message' | 'market' | 'party'>;

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** The Order message a history row stands for: the bytes the network sent, byte for byte. */
export function historyRowMessage(row: StoredMessage): Buffer {
  if (row.id_bytes.byteLength !== ORDER_ID_BYTES) {
    throw new InternalError(`a history row's order id has ${row.id_bytes.byteLength} bytes, not ${ORDER_ID_BYTES}`);
  }
  const id = hex(row.id_bytes);
  // The writer numbers both or neither (./rows.ts); one without the other is a store we did not write.
  if (row.market === null || row.party === null) {
    if (row.market !== row.party) {
      throw new InternalError(`the history row of order ${id} names its ${row.market === null ? 'party' : 'market'} only`);
    }
    return historyMessage(row.message, undefined);
  }
  return historyMessage(row.message, { id, market: row.market, party: row.party });
}

/**
 * The Order a history row holds, as the event that made it carried it
 * (times to the nanosecond; ./order-node.ts prints the API's node, on the
 * microsecond, from it).
 */
export function historyRowOrder(row: StoredMessage): Order {
  const message = historyRowMessage(row);
  try {
    return decodeOrder(message);
  } catch (e) {
    throw new InternalError(
      `the history row of order ${hex(row.id_bytes)} holds no Order message: ${(e as Error).message}`,
    );
  }
}
