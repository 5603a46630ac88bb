/**
 * The PostgreSQL schema as an ordered list of migrations, recorded in
 * schema_migrations. The same ideas as the embedded store's
 * (../sqlite/migrations.ts): current state plus history, ids as bytes, parties and
 * markets interned, every listing index ending in (created_at, id_key), times
 * in whole microseconds. Several instances may start at the same moment:
 * migrating takes an advisory lock, so one migrates and the others then find
 * nothing left to do.
 */
import type pg from 'pg';
import { SchemaVersionError, StoreNotFoundError } from '../../errors.js';
import { historyByHeight } from './history-by-height.js';
import { historyPartitions } from './history-partitions.js';
import { sayOnStderr } from '../notice.js';

export interface Migration {
  version: number;
  description: string;
  /**
   * SQL, or a step that needs more than SQL; either runs inside the
   * migration's transaction, on its session. A long step says how far it got
   * through `notice`.
   */
  up: string | ((client: pg.ClientBase, notice: (message: string) => void) => Promise<void>);
}

/** Advisory lock keys of this database (pg_advisory_lock is per database). */
export const LOCKS = {
  migrate: 0x6c71_0001n,
  /** Held for its session by the instance elected to ingest (./election.ts). */
  writer: 0x6c71_0002n,
} as const;

/**
 * Unsigned 64-bit values are NUMERIC(20): PostgreSQL has no unsigned integer,
 * and NUMERIC prints the exact decimal the API shows. Enums are INTEGER, as
 * wide as the protobuf's, so an enum value this version does not know is kept.
 * Flags are SMALLINT 0/1, as in the embedded store, so both backends share the
 * SQL of a page (../page-sql.ts).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'orders (current and history), multisig signer bundles, node signatures, blocks, last block',
    up: `
      CREATE TABLE last_block (
        only_row SMALLINT PRIMARY KEY CHECK (only_row = 1),
        height NUMERIC(20) NOT NULL,
        time BIGINT NOT NULL,
        chain_id TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      -- Each stored block, to tell a height seen again with another hash from a replay.
      CREATE TABLE blocks (
        height NUMERIC(20) PRIMARY KEY,
        hash TEXT NOT NULL,
        time BIGINT NOT NULL
      );

      CREATE TABLE parties (no INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id TEXT NOT NULL UNIQUE);
      CREATE TABLE markets (no INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id TEXT NOT NULL UNIQUE);

      -- One row per order: the state of its last event. id_key is the
      -- complement of the id's bytes (src/store/order-key.ts), the tie-break
      -- of the listing key. Room is left on each page so that an update that
      -- changes no indexed column stays on its page and touches no index (HOT).
      CREATE TABLE orders_current (
        id_bytes BYTEA PRIMARY KEY,
        id_key BYTEA NOT NULL,
        market_no INTEGER NOT NULL,
        party_no INTEGER NOT NULL,
        side INTEGER NOT NULL,
        price TEXT NOT NULL,
        size NUMERIC(20) NOT NULL,
        remaining NUMERIC(20) NOT NULL,
        time_in_force INTEGER NOT NULL,
        type INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        status INTEGER NOT NULL,
        expires_at BIGINT NOT NULL,
        reference TEXT NOT NULL,
        reason INTEGER,
        updated_at BIGINT NOT NULL,
        version NUMERIC(20) NOT NULL,
        batch_id NUMERIC(20) NOT NULL,
        pegged_reference INTEGER,
        pegged_offset TEXT,
        lp_id TEXT NOT NULL,
        post_only SMALLINT NOT NULL,
        reduce_only SMALLINT NOT NULL,
        iceberg_peak_size NUMERIC(20),
        iceberg_minimum_visible_size NUMERIC(20),
        iceberg_reserved_remaining NUMERIC(20),
        live SMALLINT NOT NULL,
        vega_time BIGINT NOT NULL
      ) WITH (fillfactor = 85);
      -- Every index ends in the listing key, so each filter is an ordered range scan both ways.
      CREATE INDEX orders_by_time ON orders_current (created_at, id_key);
      -- Most orders carry no reference; filtering on the empty one is no lookup by reference.
      CREATE INDEX orders_by_reference ON orders_current (reference, created_at, id_key) WHERE reference <> '';
      CREATE INDEX orders_by_party ON orders_current (party_no, created_at, id_key);
      CREATE INDEX orders_by_market ON orders_current (market_no, created_at, id_key);
      CREATE INDEX orders_by_status ON orders_current (status, created_at, id_key);
      CREATE INDEX orders_by_type ON orders_current (type, created_at, id_key);
      CREATE INDEX orders_by_time_in_force ON orders_current (time_in_force, created_at, id_key);
      -- Live orders are few next to all the orders ever placed: partial indexes stay small.
      CREATE INDEX orders_live_by_time ON orders_current (created_at, id_key) WHERE live = 1;
      CREATE INDEX orders_live_by_party ON orders_current (party_no, created_at, id_key) WHERE live = 1;
      CREATE INDEX orders_live_by_market ON orders_current (market_no, created_at, id_key) WHERE live = 1;

      -- Each state of each order, as the network's Order message, once per
      -- block it changed in. Keyed by block time first: every block appends at the end.
      CREATE TABLE orders_history (
        vega_time BIGINT NOT NULL,
        id_bytes BYTEA NOT NULL,
        message BYTEA NOT NULL,
        PRIMARY KEY (vega_time, id_bytes)
      );

      -- How many current orders hold each status, type, time in force and
      -- liveness: the planner (src/store/plan.ts) needs them to see a rare value.
      CREATE TABLE order_counts (
        dimension TEXT NOT NULL,
        value INTEGER NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (dimension, value)
      );

      CREATE TABLE signer_added (
        signature_id TEXT PRIMARY KEY,
        validator_id TEXT NOT NULL,
        timestamp BIGINT NOT NULL,
        new_signer TEXT NOT NULL,
        submitter TEXT NOT NULL,
        nonce TEXT NOT NULL,
        epoch_seq NUMERIC(20) NOT NULL,
        vega_time BIGINT NOT NULL
      );
      CREATE INDEX signer_added_by_time ON signer_added (timestamp, signature_id);
      CREATE INDEX signer_added_by_validator ON signer_added (validator_id, timestamp, signature_id);
      CREATE INDEX signer_added_by_epoch ON signer_added (epoch_seq, timestamp, signature_id);
      CREATE INDEX signer_added_by_submitter ON signer_added (submitter, timestamp, signature_id);

      -- One row per (signature id, submitter) pair of a signer-removed event.
      CREATE TABLE signer_removed (
        signature_id TEXT PRIMARY KEY,
        submitter TEXT NOT NULL,
        validator_id TEXT NOT NULL,
        timestamp BIGINT NOT NULL,
        old_signer TEXT NOT NULL,
        nonce TEXT NOT NULL,
        epoch_seq NUMERIC(20) NOT NULL,
        vega_time BIGINT NOT NULL
      );

      CREATE TABLE node_signatures (
        resource_id TEXT NOT NULL,
        sig BYTEA NOT NULL,
        kind INTEGER NOT NULL,
        vega_time BIGINT NOT NULL,
        PRIMARY KEY (resource_id, sig)
      );
    `,
  },
  {
    version: 2,
    description: 'history messages without the ids their row holds (../history-message.ts)',
    // As the embedded store's version 5: rows stored before lose their ids
    // where those are 64 lower-case hex characters, as the network's are;
    // other rows keep their message whole, and no market or party number.
    up: `
      ALTER TABLE orders_history ADD COLUMN market_no INTEGER, ADD COLUMN party_no INTEGER;
      UPDATE orders_history h SET market_no = m.no, party_no = p.no, message = substring(h.message FROM 199)
      FROM markets m, parties p
      WHERE length(h.message) >= 198
        AND substring(h.message FROM 1 FOR 2) = '\\x0a40'::bytea
        AND substring(h.message FROM 3 FOR 64) = convert_to(encode(h.id_bytes, 'hex'), 'UTF8')
        AND substring(h.message FROM 67 FOR 2) = '\\x1240'::bytea
        AND substring(h.message FROM 133 FOR 2) = '\\x1a40'::bytea
        AND encode(substring(h.message FROM 69 FOR 64), 'escape') ~ '^[0-9a-f]{64}$'
        AND m.id = encode(substring(h.message FROM 69 FOR 64), 'escape')
        AND encode(substring(h.message FROM 135 FOR 64), 'escape') ~ '^[0-9a-f]{64}$'
        AND p.id = encode(substring(h.message FROM 135 FOR 64), 'escape');
    `,
  },
  {
    version: 3,
    description: "each block's digest (src/domain/block-digest.ts)",
    // As the embedded store's version 6: blocks stored before get none (''),
    // and a block read again at their height is compared by its hash only.
    // A column with a constant default rewrites no row (PostgreSQL 11 on).
    up: `ALTER TABLE blocks ADD COLUMN digest TEXT NOT NULL DEFAULT '';`,
  },
  {
    version: 4,
    description: "history by block height and position, one row per order version in a block; removed bundles as the original prints them, indexed",
    // As the embedded store's version 7.
    up: historyByHeight,
  },
  {
    version: 5,
    description: 'history partitioned by block height; retention: what pruning keeps of its own, resting rows, and history as readers see it (orders_history_kept)',
    up: historyPartitions,
  },
  {
    version: 6,
    description: 'autovacuum of the tables pruning deletes from, as soon as a window has something to prune',
    // A window past the first deletes from orders_current about a fifth of
    // what it holds (the forgotten orders): at the default scale factor
    // (0.2) and cost delay its dead rows and index entries waited for a
    // vacuum long enough that the store grew for two windows more
    // (BENCHMARKS.md, "Retention"). Settings only: no row is rewritten.
    up: `
      ALTER TABLE orders_current SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0.05);
      ALTER TABLE orders_history_resting SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_cost_delay = 0);
      ALTER TABLE blocks SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_cost_delay = 0);
    `,
  },
  {
    version: 7,
    description: "each order's last change: the height of the block of its latest history row, for pruning",
    // Pruning forgets an order whose latest row is in the blocks it prunes;
    // it knew that row only by probing every later partition for a row of
    // the same version (BENCHMARKS.md, "The last change"). Orders stored
    // before have none (NULL) until they change again, and are probed as
    // before. A nullable column without a default rewrites no row.
    up: `ALTER TABLE orders_current ADD COLUMN last_height NUMERIC(20);`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;


const MIGRATIONS_TABLE = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`;

async function versionOf(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return rows[0]?.v ?? 0;
}

function tooNew(version: number): SchemaVersionError {
  return new SchemaVersionError(
    `database schema version ${version} is newer than this ledger-query knows (${SCHEMA_VERSION}); upgrade ledger-query`,
  );
}

/**
 * Applies every migration newer than the database, all in one transaction
 * under the migration lock: an instance that starts while another migrates
 * waits for it, then finds the schema current. Returns the versions before and after.
 */
export async function migrate(client: pg.ClientBase, notice: (message: string) => void = sayOnStderr): Promise<{ from: number; to: number }> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCKS.migrate]);
    await client.query(MIGRATIONS_TABLE);
    const from = await versionOf(client);
    if (from > SCHEMA_VERSION) throw tooNew(from);
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      if (typeof m.up === 'string') await client.query(m.up);
      else await m.up(client, notice);
      await client.query('INSERT INTO schema_migrations (version, description) VALUES ($1, $2)', [m.version, m.description]);
    }
    await client.query('COMMIT');
    return { from, to: Math.max(from, SCHEMA_VERSION) };
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  }
}

/** The schema version the database is at, read without writing; undefined if it holds no ledger-query schema. */
export async function storedSchemaVersion(client: pg.ClientBase): Promise<number | undefined> {
  const { rows } = await client.query<{ present: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AS present`,
  );
  return rows[0]?.present ? versionOf(client) : undefined;
}

/**
 * For instances that only read (they may have SELECT rights only, or face a
 * read replica): the schema must be at exactly our version.
 */
export async function checkSchema(client: pg.ClientBase): Promise<void> {
  const v = await storedSchemaVersion(client);
  if (v === undefined) {
    throw new StoreNotFoundError(
      'no ledger-query schema in this database: start an instance that may write (ingest, or serve without --no-ingest) once to create it',
    );
  }
  if (v > SCHEMA_VERSION) throw tooNew(v);
  if (v < SCHEMA_VERSION) {
    throw new SchemaVersionError(
      `database schema version ${v} is older than ${SCHEMA_VERSION}; start an instance that may write to migrate it`,
    );
  }
}
