/**
 * A store written today, turned back into what the previous schema kept
 * (the embedded store's version 6, PostgreSQL's migration 3), for the
 * migration tests: order history as one row per order and block, keyed by
 * (block time, id) and holding the order's last state in the block (of two
 * blocks with one time, the later one's: as that version wrote them), and
 * no indexes on signer_removed. Bundle rows stay as written: a test that
 * needs them as the previous version wrote them sets them itself.
 */
import type Database from 'better-sqlite3';
import pg from 'pg';

const REMOVED_INDEXES = ['signer_removed_by_time', 'signer_removed_by_validator', 'signer_removed_by_epoch', 'signer_removed_by_submitter'];

/** orders_history as the embedded store's version 5 created it; user_version 6. */
export function sqliteToVersion6(db: Database.Database): void {
  db.exec(`
    ${REMOVED_INDEXES.map((i) => `DROP INDEX ${i};`).join('\n')}
    CREATE TABLE orders_history_v6 (
      vega_time INTEGER NOT NULL,
      id_bytes BLOB NOT NULL,
      market_no INTEGER,
      party_no INTEGER,
      message BLOB NOT NULL,
      PRIMARY KEY (vega_time, id_bytes)
    ) WITHOUT ROWID, STRICT;
    -- In order: the last state of an order in a block, and of two blocks with one time the later, replace the others.
    INSERT OR REPLACE INTO orders_history_v6 (vega_time, id_bytes, market_no, party_no, message)
      SELECT b.time, h.id_bytes, h.market_no, h.party_no, h.message
      FROM orders_history h JOIN blocks b ON b.height = h.height ORDER BY h.height, h.seq;
    DROP TABLE orders_history;
    ALTER TABLE orders_history_v6 RENAME TO orders_history;
  `);
  db.pragma('user_version = 6');
}

/** orders_history as PostgreSQL's migrations 1 and 2 made it; schema_migrations up to 3. */
export async function postgresToVersion3(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`
      BEGIN;
      DROP INDEX ${REMOVED_INDEXES.join(', ')};
      CREATE TABLE orders_history_v3 (
        vega_time BIGINT NOT NULL,
        id_bytes BYTEA NOT NULL,
        message BYTEA NOT NULL,
        market_no INTEGER,
        party_no INTEGER,
        PRIMARY KEY (vega_time, id_bytes)
      );
      INSERT INTO orders_history_v3 (vega_time, id_bytes, message, market_no, party_no)
        SELECT DISTINCT ON (b.time, h.id_bytes) b.time, h.id_bytes, h.message, h.market_no, h.party_no
        FROM orders_history h JOIN blocks b ON b.height = h.height
        ORDER BY b.time, h.id_bytes, h.height DESC, h.seq DESC;
      DROP TABLE orders_history;
      ALTER TABLE orders_history_v3 RENAME TO orders_history;
      ALTER INDEX orders_history_v3_pkey RENAME TO orders_history_pkey;
      DELETE FROM schema_migrations WHERE version >= 4;
      COMMIT;
    `);
  } finally {
    await client.end();
  }
}

/** A history row as the previous schema kept it. */
export interface PreviousHistoryRow {
  vega_time: bigint | string;
  id_bytes: Buffer;
  message: Buffer;
  market: string | null;
  party: string | null;
}

/** Rows of the previous schema's orders_history with the ids their numbers stand for, as HISTORY_SQL reads today's. */
export const PREVIOUS_HISTORY_SQL = `SELECT h.vega_time, h.id_bytes, h.message, m.id AS market, p.id AS party
  FROM orders_history h LEFT JOIN markets m ON m.no = h.market_no LEFT JOIN parties p ON p.no = h.party_no`;
