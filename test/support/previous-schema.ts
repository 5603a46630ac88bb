/**
 * A store written today, turned back into what earlier schemas kept, for
 * the migration tests: before the id levels (the embedded store's version
 * 9), one unique index of every order's id; before order numbers (the embedded store's version
 * 8), orders_history naming its order by id; before retention (the embedded store's version 7,
 * PostgreSQL's migration 4), history in one table, no retention row, no
 * view of it; and before that (version 6, migration 3): order history as one row per order and block, keyed by
 * (block time, id) and holding the order's last state in the block (of two
 * blocks with one time, the later one's: as that version wrote them), and
 * no indexes on signer_removed. Bundle rows stay as written: a test that
 * needs them as the previous version wrote them sets them itself.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Block } from '../../src/domain/block.js';
import { databasePath } from '../../src/store/location.js';
import type { StoreConfig } from '../../src/store/store.js';
import { query } from './postgres.js';

const REMOVED_INDEXES = ['signer_removed_by_time', 'signer_removed_by_validator', 'signer_removed_by_epoch', 'signer_removed_by_submitter'];

/** The embedded store as version 9 left it: orders found by one unique index of their ids; user_version 9. */
export function sqliteToVersion9(db: Database.Database): void {
  const levels = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'order\\_id%' ESCAPE '\\'").pluck().all() as string[];
  db.exec(`
    DROP VIEW order_ids;
    ${levels.map((name) => `DROP TABLE ${name};`).join('\n')}
    CREATE UNIQUE INDEX orders_current_id ON orders_current (id_bytes);
  `);
  db.pragma('user_version = 9');
}

/**
 * The embedded store as version 8 left it: orders without a number of their
 * own (the rowid they had), history rows naming their order by its id and
 * indexed by it; user_version 8.
 */
export function sqliteToVersion8(db: Database.Database): void {
  sqliteToVersion9(db);
  const current = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'orders_current'").pluck().get() as string;
  const indexes = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'orders_current' AND sql IS NOT NULL")
    .pluck().all() as string[];
  const columns = (db.prepare("SELECT name FROM pragma_table_info('orders_current') WHERE name <> 'no'").pluck().all() as string[]).join(', ');
  db.exec(`
    ${current.replace(/^CREATE TABLE "?orders_current"?/, 'CREATE TABLE orders_current_v8').replace(/no INTEGER PRIMARY KEY,/, '')};
    INSERT INTO orders_current_v8 (rowid, ${columns}) SELECT no, ${columns} FROM orders_current;
    DROP TABLE orders_current;
    ALTER TABLE orders_current_v8 RENAME TO orders_current;
    ${indexes.map((sql) => `${sql};`).join('\n')}
    DROP VIEW orders_history_kept;
    DROP INDEX orders_history_by_order;
    ALTER TABLE orders_history DROP COLUMN order_no;
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (id_bytes, version, height);
    CREATE VIEW orders_history_kept AS SELECT * FROM orders_history;
  `);
  db.pragma('user_version = 8');
}

/** The embedded store as version 7 left it: no retention row, no view of history; user_version 7. */
export function sqliteToVersion7(db: Database.Database): void {
  sqliteToVersion8(db);
  db.exec('DROP VIEW orders_history_kept; DROP TABLE retention;');
  db.pragma('user_version = 7');
}

/** orders_history as the embedded store's version 5 created it; user_version 6. */
export function sqliteToVersion6(db: Database.Database): void {
  sqliteToVersion7(db);
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

/** PostgreSQL as migration 4 left it: history in one table, no retention row, resting rows or view, no last change; schema_migrations up to 4. */
export async function postgresToVersion4(url: string): Promise<void> {
  await query(url, `
    BEGIN;
    DROP VIEW orders_history_kept;
    DROP TABLE orders_history_resting, retention;
    CREATE TABLE orders_history_v4 (
      height NUMERIC(20) NOT NULL,
      seq INTEGER NOT NULL,
      id_bytes BYTEA NOT NULL,
      version NUMERIC(20) NOT NULL,
      market_no INTEGER,
      party_no INTEGER,
      message BYTEA NOT NULL,
      PRIMARY KEY (height, seq)
    );
    INSERT INTO orders_history_v4 SELECT height, seq, id_bytes, version, market_no, party_no, message FROM orders_history;
    DROP TABLE orders_history;
    ALTER TABLE orders_history_v4 RENAME TO orders_history;
    ALTER INDEX orders_history_v4_pkey RENAME TO orders_history_pkey;
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (id_bytes, version, height);
    ALTER TABLE orders_current DROP COLUMN last_height;
    DELETE FROM schema_migrations WHERE version >= 5;
    COMMIT;
  `);
}

/** orders_history as PostgreSQL's migrations 1 and 2 made it; schema_migrations up to 3. */
export async function postgresToVersion3(url: string): Promise<void> {
  await postgresToVersion4(url);
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

/** A signer_removed row's fields as the previous version wrote them: as the event said. */
export interface RemovedAsWritten {
  signatureId: string;
  submitter: string;
  oldSigner: string;
  timestamp: bigint;
}

/** The signer_removed rows of `blocks` as the previous version wrote them (its keys are lower case already). */
export function removedAsWritten(blocks: readonly Block[]): RemovedAsWritten[] {
  return blocks.flatMap((b) => b.signersRemoved.flatMap((r) => r.signatureSubmitters.map((s) => ({
    signatureId: s.signatureId.toLowerCase(), submitter: s.submitter, oldSigner: r.oldSigner, timestamp: r.timestamp,
  }))));
}

/**
 * The store `config` names, written today and closed, turned into what the
 * previous version (embedded 6, PostgreSQL 3) would have written: its
 * history, and `removed` as it wrote signer_removed rows.
 */
export async function toPreviousSchema(config: StoreConfig, removed: readonly RemovedAsWritten[]): Promise<void> {
  const url = config.databaseUrl;
  if (url === undefined) {
    const db = new Database(databasePath(config.dataDir));
    try {
      sqliteToVersion6(db);
      const update = db.prepare('UPDATE signer_removed SET submitter = ?, old_signer = ?, timestamp = ? WHERE signature_id = ?');
      for (const r of removed) assert1(update.run(r.submitter, r.oldSigner, r.timestamp, r.signatureId).changes);
    } finally {
      db.close();
    }
    return;
  }
  await postgresToVersion3(url);
  for (const r of removed) {
    const rows = await query(url, 'UPDATE signer_removed SET submitter = $1, old_signer = $2, timestamp = $3 WHERE signature_id = $4 RETURNING 1', [
      r.submitter, r.oldSigner, r.timestamp.toString(), r.signatureId,
    ]);
    assert1(rows.length);
  }
}

function assert1(changed: number): void {
  if (changed !== 1) throw new Error(`${changed} signer_removed rows changed, not 1`);
}
