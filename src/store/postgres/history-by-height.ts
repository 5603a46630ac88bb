/**
 * Migration 4 of the PostgreSQL schema (./schema.ts), as the embedded
 * store's version 7 (../sqlite/history-by-height.ts): order history keyed by
 * block height and position, and signer-removed bundles as the original
 * prints them, indexed. A step in JavaScript, run on the migrating session
 * inside the migration's transaction: each stored row's version is read from
 * its message by the protobuf reader, and bundle rows are put right by the
 * functions that prepare new rows (../rows.ts), rather than by SQL that
 * would say the same again. Frozen once released, like every migration.
 */
import type pg from 'pg';
import { printedAddress } from '../../domain/bundle.js';
import { toMicros } from '../../domain/time.js';
import { MigrationError } from '../../errors.js';
import { orderVersionOf } from '../../wire/order-message.js';

/** Rows per FETCH and per INSERT: a few MB of messages at a time. */
const SLICE_ROWS = 10_000;

/**
 * - orders_history: one row per (order, version, block) from now on, keyed
 *   by (height, seq), seq the row's position in its block's batch; each
 *   row's Order version beside it, and a unique index by (order, version,
 *   height) for the reads of one order. Stored rows (one per order and
 *   block) take the height of their block by time (of blocks with that time,
 *   the highest), numbered by order id within it; rows with no block of
 *   their time take height 0, numbered in (time, id) order. Their version is
 *   read from the stored message. Of rows that would share an (order,
 *   version, height), which only height 0 can hold (the same version of an
 *   order in several blocks, none of them kept), the latest stays: the
 *   final state of that version, all the original's reads of a version
 *   show.
 * - signer_removed: addresses "0x" + lower case and timestamps on the whole
 *   microsecond, and the indexes of src/store/indexes.ts
 *   (REMOVED_BUNDLE_INDEXES), as literal statements.
 */
export async function historyByHeight(client: pg.ClientBase): Promise<void> {
  // Each stored row's version, read from its message here, then one statement moves the rows. Not a
  // temporary table: the writer's session sets temp_buffers after migrating, which its first one would forbid.
  await client.query(`
    CREATE UNLOGGED TABLE lq_stored_versions (
      vega_time BIGINT NOT NULL, id_bytes BYTEA NOT NULL, version NUMERIC(20) NOT NULL, PRIMARY KEY (vega_time, id_bytes)
    );
    DECLARE lq_stored_history NO SCROLL CURSOR FOR SELECT vega_time::text AS vega_time, id_bytes, message FROM orders_history;
  `);
  const insert = `
    INSERT INTO lq_stored_versions (vega_time, id_bytes, version)
    SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::numeric[])`;
  for (;;) {
    const { rows } = await client.query<StoredRow>(`FETCH ${SLICE_ROWS} FROM lq_stored_history`);
    if (rows.length === 0) break;
    const versions = rows.map((r) => {
      try {
        return orderVersionOf(r.message).toString();
      } catch (e) {
        throw new MigrationError(
          `cannot migrate: the history row of order ${r.id_bytes.toString('hex')} at ${r.vega_time} holds no Order message (${(e as Error).message})`,
        );
      }
    });
    await client.query(insert, [rows.map((r) => r.vega_time), rows.map((r) => r.id_bytes), versions]);
  }
  await client.query(`
    CLOSE lq_stored_history;
    ALTER TABLE orders_history RENAME TO orders_history_v3;
    ALTER INDEX orders_history_pkey RENAME TO orders_history_v3_pkey;
    CREATE TABLE orders_history (
      height NUMERIC(20) NOT NULL,
      -- The row's position in its block's batch (the original's order).
      seq INTEGER NOT NULL,
      id_bytes BYTEA NOT NULL,
      version NUMERIC(20) NOT NULL,
      -- NULL: the message is kept whole. Else the message's leading ids are
      -- the order's, this market's and this party's, and left out.
      market_no INTEGER,
      party_no INTEGER,
      message BYTEA NOT NULL,
      PRIMARY KEY (height, seq)
    );
    INSERT INTO orders_history (height, seq, id_bytes, version, market_no, party_no, message)
      SELECT height, (row_number() OVER (PARTITION BY height ORDER BY vega_time, id_bytes) - 1)::integer,
        id_bytes, version, market_no, party_no, message
      FROM (
        SELECT r.*, row_number() OVER (PARTITION BY height, id_bytes, version ORDER BY vega_time DESC) AS nth
        FROM (
          SELECT coalesce(b.height, 0) AS height, h.vega_time, h.id_bytes, v.version, h.market_no, h.party_no, h.message
          FROM orders_history_v3 h
          JOIN lq_stored_versions v ON v.vega_time = h.vega_time AND v.id_bytes = h.id_bytes
          LEFT JOIN (SELECT time, max(height) AS height FROM blocks GROUP BY time) b ON b.time = h.vega_time
        ) r
      ) r
      WHERE nth = 1;
    DROP TABLE orders_history_v3;
    DROP TABLE lq_stored_versions;
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (id_bytes, version, height);
  `);

  const { rows: removed } = await client.query<RemovedRow>(
    'SELECT signature_id, submitter, old_signer, timestamp::text AS timestamp FROM signer_removed',
  );
  const changed = removed
    .map((r) => ({
      id: r.signature_id, submitter: printedAddress(r.submitter), oldSigner: printedAddress(r.old_signer),
      timestamp: toMicros(BigInt(r.timestamp)).toString(), was: r,
    }))
    .filter((r) => r.submitter !== r.was.submitter || r.oldSigner !== r.was.old_signer || r.timestamp !== r.was.timestamp);
  if (changed.length > 0) {
    await client.query(
      `UPDATE signer_removed s SET submitter = c.submitter, old_signer = c.old_signer, timestamp = c.timestamp
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) c (signature_id, submitter, old_signer, timestamp)
       WHERE s.signature_id = c.signature_id`,
      [changed.map((r) => r.id), changed.map((r) => r.submitter), changed.map((r) => r.oldSigner), changed.map((r) => r.timestamp)],
    );
  }
  await client.query(`
    CREATE INDEX signer_removed_by_time ON signer_removed (timestamp, signature_id);
    CREATE INDEX signer_removed_by_validator ON signer_removed (validator_id, timestamp, signature_id);
    CREATE INDEX signer_removed_by_epoch ON signer_removed (epoch_seq, timestamp, signature_id);
    CREATE INDEX signer_removed_by_submitter ON signer_removed (submitter, timestamp, signature_id);
  `);
}

/** A row of the cursor over stored history. */
interface StoredRow {
  vega_time: string;
  id_bytes: Buffer;
  message: Buffer;
}

interface RemovedRow {
  signature_id: string;
  submitter: string;
  old_signer: string;
  timestamp: string;
}
