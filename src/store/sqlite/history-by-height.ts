/**
 * Schema version 7 of the embedded store (./migrations.ts), a step of its
 * own for its length: order history keyed by block height and position, as
 * the original keeps it, and signer-removed bundles as the original prints
 * them, with the listing indexes the added ones have. Frozen once released,
 * like every migration.
 */
import type Database from 'better-sqlite3';
import { printedAddress } from '../../domain/bundle.js';
import { toMicros } from '../../domain/time.js';
import { MigrationError } from '../../errors.js';
import { orderVersionOf } from '../../wire/order-message.js';
import { u64 } from '../rows.js';

/**
 * - orders_history: one row per (order, version, block) from now on, keyed
 *   by (height, seq), seq the row's position in its block's batch; each
 *   row's Order version beside it, and a unique index by (order, version,
 *   height) for the reads of one order. Stored rows (one per order and
 *   block) take the height of their block by time (of blocks with that time,
 *   the highest), numbered by order id within it; rows stored before blocks
 *   were kept (version 4) match none and take height 0, numbered in (time,
 *   id) order, which keeps their order. Their version is read from the
 *   stored message. Of rows that would share an (order, version, height),
 *   which only height 0 can hold (the same version of an order in several
 *   blocks before version 4), the latest stays: the final state of that
 *   version, all the original's reads of a version show.
 * - signer_removed: addresses "0x" + lower case and timestamps on the whole
 *   microsecond, as the original answers (rows written from now on are
 *   prepared the same way, by the same functions: ../rows.ts); the indexes
 *   of src/store/indexes.ts (REMOVED_BUNDLE_INDEXES), as literal statements.
 */
export function historyByHeight(db: Database.Database): void {
  db.function('lq_stored_version', { deterministic: true, safeIntegers: true }, (message: unknown, time: unknown, id: unknown) => {
    try {
      return u64(orderVersionOf(message as Buffer));
    } catch (e) {
      throw new MigrationError(
        `cannot migrate: the history row of order ${(id as Buffer).toString('hex')} at ${String(time)} holds no Order message (${(e as Error).message})`,
      );
    }
  });
  db.function('lq_micros', { deterministic: true, safeIntegers: true }, (ns: unknown) => toMicros(ns as bigint));
  db.function('lq_address', { deterministic: true }, (a: unknown) => printedAddress(a as string));
  db.exec(`
    CREATE TABLE orders_history_v7 (
      height ANY NOT NULL,
      -- The row's position in its block's batch (the original's order).
      seq INTEGER NOT NULL,
      id_bytes BLOB NOT NULL,
      version ANY NOT NULL,
      -- NULL: the message is kept whole. Else the message's leading ids are
      -- the order's, this market's and this party's, and left out.
      market_no INTEGER,
      party_no INTEGER,
      message BLOB NOT NULL,
      PRIMARY KEY (height, seq)
    ) WITHOUT ROWID, STRICT;

    CREATE TEMP TABLE lq_block_of_time (time INTEGER PRIMARY KEY, height ANY NOT NULL) STRICT;
    INSERT INTO lq_block_of_time (time, height) SELECT time, max(height) FROM blocks GROUP BY time;
    INSERT INTO orders_history_v7 (height, seq, id_bytes, version, market_no, party_no, message)
      SELECT height, row_number() OVER (PARTITION BY height ORDER BY vega_time, id_bytes) - 1,
        id_bytes, version, market_no, party_no, message
      FROM (
        SELECT *, row_number() OVER (PARTITION BY height, id_bytes, version ORDER BY vega_time DESC) AS nth
        FROM (
          SELECT coalesce(b.height, 0) AS height, h.vega_time, h.id_bytes,
            lq_stored_version(h.message, h.vega_time, h.id_bytes) AS version, h.market_no, h.party_no, h.message
          FROM orders_history h LEFT JOIN lq_block_of_time b ON b.time = h.vega_time
        )
      )
      WHERE nth = 1;
    DROP TABLE lq_block_of_time;
    DROP TABLE orders_history;
    ALTER TABLE orders_history_v7 RENAME TO orders_history;
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (id_bytes, version, height);

    UPDATE signer_removed SET
      timestamp = lq_micros(timestamp),
      submitter = lq_address(submitter),
      old_signer = lq_address(old_signer);
    CREATE INDEX signer_removed_by_time ON signer_removed (timestamp, signature_id);
    CREATE INDEX signer_removed_by_validator ON signer_removed (validator_id, timestamp, signature_id);
    CREATE INDEX signer_removed_by_epoch ON signer_removed (epoch_seq, timestamp, signature_id);
    CREATE INDEX signer_removed_by_submitter ON signer_removed (submitter, timestamp, signature_id);
  `);
}
