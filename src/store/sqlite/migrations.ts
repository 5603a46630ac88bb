/**
 * The SQLite schema as an ordered list of migrations, applied by ./schema.ts.
 * Released migrations are frozen: they are what existing stores were built
 * with, so a change to the schema is a new migration at the end.
 */
import type Database from 'better-sqlite3';
import { printedAddress } from '../../domain/bundle.js';
import type { Order } from '../../domain/order.js';
import { toMicros } from '../../domain/time.js';
import { encodeOrder } from '../../wire/order-message.js';
import { orderKeyOfBytes } from '../order-key.js';
import { MigrationError } from '../../errors.js';
import { historyByHeight } from './history-by-height.js';
import { fillOrderIds, ORDER_ID_LEVELS_SQL } from './order-ids.js';
import { orderNumbers } from './order-numbers.js';
import { RETENTION_TABLE_SQL } from './retention-table.js';

export interface Migration {
  version: number;
  description: string;
  /** SQL, or a step that needs more than SQL (told where its progress goes); it runs inside the migration's transaction. */
  up: string | ((db: Database.Database, notice: (message: string) => void) => void);
}

/**
 * Columns shared by the current and the history table of orders. 64-bit
 * unsigned values are ANY: an INTEGER when they fit in a signed 64-bit
 * integer, else their decimal text, so that no value is ever rounded.
 * Nullable columns are the optional parts of an order: NULL = absent, not zero.
 * Migrations already released use it as it is: never edit it, add a migration.
 */
const ORDER_COLUMNS = `
  id TEXT NOT NULL,
  market_id TEXT NOT NULL,
  party_id TEXT NOT NULL,
  side INTEGER NOT NULL,
  price TEXT NOT NULL,
  size ANY NOT NULL,
  remaining ANY NOT NULL,
  time_in_force INTEGER NOT NULL,
  type INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  status INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  reference TEXT NOT NULL,
  reason INTEGER,
  updated_at INTEGER NOT NULL,
  version ANY NOT NULL,
  batch_id ANY NOT NULL,
  pegged_reference INTEGER,
  pegged_offset TEXT,
  lp_id TEXT NOT NULL,
  post_only INTEGER NOT NULL,
  reduce_only INTEGER NOT NULL,
  iceberg_peak_size ANY,
  iceberg_minimum_visible_size ANY,
  iceberg_reserved_remaining ANY,
  live INTEGER NOT NULL,
  vega_time INTEGER NOT NULL`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'orders (current and history), multisig signer bundles, node signatures, last block',
    up: `
      CREATE TABLE last_block (
        only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
        height ANY NOT NULL,
        time INTEGER NOT NULL,
        chain_id TEXT NOT NULL
      ) STRICT;

      -- One row per order id: the state of its last event.
      CREATE TABLE orders_current (${ORDER_COLUMNS}) STRICT;
      CREATE UNIQUE INDEX orders_current_id ON orders_current (id);
      -- Every index ends in the listing key (created_at, id) so that each filter
      -- is an ordered range scan in both directions.
      CREATE INDEX orders_by_time ON orders_current (created_at, id);
      -- Most orders carry no reference; filtering on the empty one is no lookup by reference.
      CREATE INDEX orders_by_reference ON orders_current (reference, created_at, id) WHERE reference <> '';
      CREATE INDEX orders_by_party ON orders_current (party_id, created_at, id);
      CREATE INDEX orders_by_market ON orders_current (market_id, created_at, id);
      CREATE INDEX orders_by_status ON orders_current (status, created_at, id);
      CREATE INDEX orders_by_type ON orders_current (type, created_at, id);
      CREATE INDEX orders_by_time_in_force ON orders_current (time_in_force, created_at, id);
      -- Live orders are few next to all the orders ever placed: partial indexes stay small.
      CREATE INDEX orders_live_by_time ON orders_current (created_at, id) WHERE live = 1;
      CREATE INDEX orders_live_by_party ON orders_current (party_id, created_at, id) WHERE live = 1;
      CREATE INDEX orders_live_by_market ON orders_current (market_id, created_at, id) WHERE live = 1;

      -- The last state of each order in each block it changed in. Keyed by
      -- (vega_time, id) rather than (id, vega_time): the same pair, but every
      -- block appends at the end of the tree instead of dirtying pages all over it.
      CREATE TABLE orders_history (${ORDER_COLUMNS}, PRIMARY KEY (vega_time, id)) WITHOUT ROWID, STRICT;

      -- How many current orders hold each status, type, time in force and
      -- liveness: the planner needs them to see a rare value. The block writer
      -- keeps them in the same transaction as the orders.
      CREATE TABLE order_counts (
        dimension TEXT NOT NULL,
        value INTEGER NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (dimension, value)
      ) WITHOUT ROWID, STRICT;

      CREATE TABLE signer_added (
        signature_id TEXT NOT NULL PRIMARY KEY,
        validator_id TEXT NOT NULL,
        timestamp INTEGER NOT NULL,
        new_signer TEXT NOT NULL,
        submitter TEXT NOT NULL,
        submitter_lower TEXT NOT NULL,
        nonce TEXT NOT NULL,
        epoch_seq ANY NOT NULL,
        vega_time INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX signer_added_by_time ON signer_added (timestamp, signature_id);
      CREATE INDEX signer_added_by_validator ON signer_added (validator_id, timestamp, signature_id);
      CREATE INDEX signer_added_by_epoch ON signer_added (epoch_seq, timestamp, signature_id);
      CREATE INDEX signer_added_by_submitter ON signer_added (submitter_lower, timestamp, signature_id);

      -- One row per (signature id, submitter) pair of a signer-removed event.
      CREATE TABLE signer_removed (
        signature_id TEXT NOT NULL PRIMARY KEY,
        submitter TEXT NOT NULL,
        validator_id TEXT NOT NULL,
        timestamp INTEGER NOT NULL,
        old_signer TEXT NOT NULL,
        nonce TEXT NOT NULL,
        epoch_seq ANY NOT NULL,
        vega_time INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE node_signatures (
        resource_id TEXT NOT NULL,
        sig BLOB NOT NULL,
        kind INTEGER NOT NULL,
        vega_time INTEGER NOT NULL,
        PRIMARY KEY (resource_id, sig)
      ) WITHOUT ROWID, STRICT;
    `,
  },
  {
    version: 2,
    description: 'orders indexed by id bytes and interned party and market numbers; history keeps Order messages',
    up: compactOrderKeys,
  },
  {
    version: 3,
    description: 'current orders hold their ids as bytes and numbers only',
    // Each row shrinks by its three 64-character ids, which every write bound
    // and every page of the table carried. Responses print the id from its
    // bytes and parties and markets from their tables; no index used the text.
    up: `
      ALTER TABLE orders_current DROP COLUMN id;
      ALTER TABLE orders_current DROP COLUMN market_id;
      ALTER TABLE orders_current DROP COLUMN party_id;
    `,
  },
  {
    version: 4,
    description: "the original's answers: microsecond times, newest first by id ascending, ids and addresses in lower case; block hashes",
    up: asTheOriginalAnswers,
  },
  {
    version: 5,
    description: 'history messages without the ids their row holds (../history-message.ts)',
    // Rows stored before lose their ids where those are 64 lower-case hex
    // characters, as the network's are; other rows keep their message whole.
    // The freed pages are reused by the blocks that follow (VACUUM returns them).
    up: `
      CREATE TABLE orders_history_v5 (
        vega_time INTEGER NOT NULL,
        id_bytes BLOB NOT NULL,
        -- NULL: the message is kept whole. Else the message's leading ids are
        -- the order's, this market's and this party's, and left out.
        market_no INTEGER,
        party_no INTEGER,
        message BLOB NOT NULL,
        PRIMARY KEY (vega_time, id_bytes)
      ) WITHOUT ROWID, STRICT;
      INSERT INTO orders_history_v5 (vega_time, id_bytes, market_no, party_no, message)
        SELECT vega_time, id_bytes, iif(party_no IS NULL, NULL, market_no), iif(market_no IS NULL, NULL, party_no),
          iif(market_no IS NULL OR party_no IS NULL, message, substr(message, 199))
        FROM (
          SELECT vega_time, id_bytes, message,
            iif(leading, (SELECT no FROM markets WHERE id = CAST(substr(message, 69, 64) AS TEXT)), NULL) AS market_no,
            iif(leading, (SELECT no FROM parties WHERE id = CAST(substr(message, 135, 64) AS TEXT)), NULL) AS party_no
          FROM (
            -- Does the message begin with its id, a market and a party, each as 64 lower-case hex characters?
            SELECT *, length(message) >= 198 AND substr(message, 1, 2) = x'0a40' AND substr(message, 3, 64) = CAST(lower(hex(id_bytes)) AS BLOB)
              AND substr(message, 67, 2) = x'1240' AND substr(message, 133, 2) = x'1a40'
              AND CAST(substr(message, 69, 64) AS TEXT) NOT GLOB '*[^0-9a-f]*'
              AND CAST(substr(message, 135, 64) AS TEXT) NOT GLOB '*[^0-9a-f]*' AS leading
            FROM orders_history
          )
        );
      DROP TABLE orders_history;
      ALTER TABLE orders_history_v5 RENAME TO orders_history;
    `,
  },
  {
    version: 6,
    description: "each block's digest (../../domain/block-digest.ts)",
    // Blocks stored before get none (''), and a block read again at their
    // height is compared by its hash only, as blocks stored before version 4
    // are not compared at all. Adding a column with a default rewrites nothing.
    up: `ALTER TABLE blocks ADD COLUMN digest TEXT NOT NULL DEFAULT '';`,
  },
  {
    version: 7,
    description: "history by block height and position, one row per order version in a block; removed bundles as the original prints them, indexed",
    up: historyByHeight,
  },
  {
    version: 8,
    description: 'retention: what pruning keeps of its own, and history as readers see it (orders_history_kept)',
    up: RETENTION_TABLE_SQL,
  },
  {
    version: 9,
    description: 'order numbers: history rows name their order by a number that grows with time, and are indexed by it',
    up: orderNumbers,
  },
  {
    version: 10,
    description: 'orders by id in levels (./order-ids.ts): a new id lands in a small table, and moves down in sorted slices',
    up: (db, notice) => {
      const orders = db.prepare('SELECT count(*) FROM orders_current').pluck().get() as bigint;
      if (orders > 0n) notice(`migrating to schema 10 (orders by id in levels): the ids of ${orders} orders into the last level, in one sorted pass`);
      db.exec(ORDER_ID_LEVELS_SQL);
      fillOrderIds(db);
      db.exec('DROP INDEX orders_current_id');
    },
  },
];

/**
 * The order indexes, each ending in the listing key; version 4 rebuilds them
 * on (created_at, id_key). Kept as released rather than derived from
 * ../indexes.ts, so that version 4 drops and creates what it always did.
 */
const ORDER_INDEXES: readonly [name: string, leading: string, where?: string][] = [
  ['orders_by_time', ''],
  // Most orders carry no reference; filtering on the empty one is no lookup by reference.
  ['orders_by_reference', 'reference', "reference <> ''"],
  ['orders_by_party', 'party_no'],
  ['orders_by_market', 'market_no'],
  ['orders_by_status', 'status'],
  ['orders_by_type', 'type'],
  ['orders_by_time_in_force', 'time_in_force'],
  // Live orders are few next to all the orders ever placed: partial indexes stay small.
  ['orders_live_by_time', '', 'live = 1'],
  ['orders_live_by_party', 'party_no', 'live = 1'],
  ['orders_live_by_market', 'market_no', 'live = 1'],
];

/**
 * Stores written before version 4 kept what the events said; the original
 * answers differently, and ordering and filters depend on it:
 * - times are whole microseconds (the original keeps them in PostgreSQL);
 * - newest first lists orders of one time by id ascending: the listing key
 *   ends in id_key, the complement of the id's bytes (./order-key.ts), so one
 *   index still serves both directions;
 * - liquidity provision ids are lower case, and bundle addresses "0x" + lower
 *   case (the original stores bytes), so the submitter needs no second column;
 * - each stored block's hash is kept, to tell a height seen again with
 *   another hash (a chain restarted) from a replay. Blocks stored before have
 *   none.
 * The rules are applied by the same functions that prepare new rows.
 */
function asTheOriginalAnswers(db: Database.Database): void {
  db.function('lq_micros', { deterministic: true, safeIntegers: true }, (ns: unknown) => toMicros(ns as bigint));
  db.function('lq_order_key', { deterministic: true }, (id: unknown) => orderKeyOfBytes(id as Buffer));
  db.function('lq_address', { deterministic: true }, (a: unknown) => printedAddress(a as string));
  db.exec(`
    CREATE TABLE blocks (
      height ANY NOT NULL PRIMARY KEY,
      hash TEXT NOT NULL,
      time INTEGER NOT NULL
    ) WITHOUT ROWID, STRICT;
    ALTER TABLE last_block ADD COLUMN hash TEXT NOT NULL DEFAULT '';

    ${ORDER_INDEXES.map(([name]) => `DROP INDEX ${name};`).join('\n    ')}
    ALTER TABLE orders_current ADD COLUMN id_key BLOB NOT NULL DEFAULT x'';
    UPDATE orders_current SET
      id_key = lq_order_key(id_bytes),
      created_at = lq_micros(created_at),
      updated_at = lq_micros(updated_at),
      expires_at = lq_micros(expires_at),
      lp_id = lower(lp_id);
    ${ORDER_INDEXES.map(([name, leading, where]) =>
      `CREATE INDEX ${name} ON orders_current (${leading ? `${leading}, ` : ''}created_at, id_key)${where ? ` WHERE ${where}` : ''};`,
    ).join('\n    ')}

    DROP INDEX signer_added_by_submitter;
    ALTER TABLE signer_added DROP COLUMN submitter_lower;
    UPDATE signer_added SET
      timestamp = lq_micros(timestamp),
      new_signer = lq_address(new_signer),
      submitter = lq_address(submitter);
    CREATE INDEX signer_added_by_submitter ON signer_added (submitter, timestamp, signature_id);
  `);
}

/**
 * Index entries of orders shrink from about 145 bytes to 50 (the ten filter
 * indexes from 29k to 14k pages per 160k orders): every index ends in the
 * order id, now its 32 bytes rather than 64 hex characters (byte order is the
 * order of lowercase hex, so listings do not change), and parties and markets
 * are indexed by a number. The rows keep the hex text that responses print.
 * History rows become (block time, id bytes, Order message): three values to
 * bind instead of 27, and every field of the order kept, even those
 * ledger-query does not decode.
 */
function compactOrderKeys(db: Database.Database): void {
  const bad = db.prepare(`SELECT id FROM orders_current WHERE length(id) <> 64 OR unhex(id) IS NULL LIMIT 1`).pluck().get();
  if (bad !== undefined) throw new MigrationError(`cannot migrate: order id ${JSON.stringify(bad)} is not 64 hex digits`);
  db.exec(`
    CREATE TABLE parties (no INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE) STRICT;
    CREATE TABLE markets (no INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE) STRICT;
    INSERT INTO parties (id) SELECT DISTINCT party_id FROM orders_current;
    INSERT INTO markets (id) SELECT DISTINCT market_id FROM orders_current;

    CREATE TABLE orders_current_v2 (
      ${ORDER_COLUMNS},
      -- The id's 32 bytes: the key every index ends in.
      id_bytes BLOB NOT NULL,
      party_no INTEGER NOT NULL REFERENCES parties (no),
      market_no INTEGER NOT NULL REFERENCES markets (no)
    ) STRICT;
    INSERT INTO orders_current_v2
      SELECT o.*, unhex(o.id), p.no, m.no
      FROM orders_current AS o JOIN parties AS p ON p.id = o.party_id JOIN markets AS m ON m.id = o.market_id;
    DROP TABLE orders_current;
    ALTER TABLE orders_current_v2 RENAME TO orders_current;
    CREATE UNIQUE INDEX orders_current_id ON orders_current (id_bytes);
    -- Every index ends in the listing key (created_at, id_bytes) so that each
    -- filter is an ordered range scan in both directions.
    CREATE INDEX orders_by_time ON orders_current (created_at, id_bytes);
    -- Most orders carry no reference; filtering on the empty one is no lookup by reference.
    CREATE INDEX orders_by_reference ON orders_current (reference, created_at, id_bytes) WHERE reference <> '';
    CREATE INDEX orders_by_party ON orders_current (party_no, created_at, id_bytes);
    CREATE INDEX orders_by_market ON orders_current (market_no, created_at, id_bytes);
    CREATE INDEX orders_by_status ON orders_current (status, created_at, id_bytes);
    CREATE INDEX orders_by_type ON orders_current (type, created_at, id_bytes);
    CREATE INDEX orders_by_time_in_force ON orders_current (time_in_force, created_at, id_bytes);
    -- Live orders are few next to all the orders ever placed: partial indexes stay small.
    CREATE INDEX orders_live_by_time ON orders_current (created_at, id_bytes) WHERE live = 1;
    CREATE INDEX orders_live_by_party ON orders_current (party_no, created_at, id_bytes) WHERE live = 1;
    CREATE INDEX orders_live_by_market ON orders_current (market_no, created_at, id_bytes) WHERE live = 1;

    -- Each state of each order, as the network's Order message, once per block
    -- it changed in. Keyed by block time first: every block appends at the end.
    CREATE TABLE orders_history_v2 (
      vega_time INTEGER NOT NULL,
      id_bytes BLOB NOT NULL,
      message BLOB NOT NULL,
      PRIMARY KEY (vega_time, id_bytes)
    ) WITHOUT ROWID, STRICT;
  `);
  const insert = db.prepare('INSERT INTO orders_history_v2 (vega_time, id_bytes, message) VALUES (?, unhex(?), ?)');
  // In slices along the key: a connection cannot write while it iterates a query.
  const slice = db.prepare('SELECT * FROM orders_history WHERE (vega_time, id) > (?, ?) ORDER BY vega_time, id LIMIT 10000');
  let after: [bigint, string] = [-(1n << 63n), ''];
  for (;;) {
    const rows = slice.all(...after) as V1OrderRow[];
    const last = rows.at(-1);
    if (last === undefined) break;
    for (const row of rows) insert.run(row.vega_time, row.id, encodeOrder(orderOfV1Row(row)));
    after = [last.vega_time, last.id];
  }
  db.exec(`
    DROP TABLE orders_history;
    ALTER TABLE orders_history_v2 RENAME TO orders_history;
  `);
}

/** A row of ORDER_COLUMNS as version 1 stored it. */
interface V1OrderRow {
  id: string; market_id: string; party_id: string; side: bigint; price: string; size: bigint | string;
  remaining: bigint | string; time_in_force: bigint; type: bigint; created_at: bigint; status: bigint;
  expires_at: bigint; reference: string; reason: bigint | null; updated_at: bigint; version: bigint | string;
  batch_id: bigint | string; pegged_reference: bigint | null; pegged_offset: string | null; lp_id: string;
  post_only: bigint; reduce_only: bigint; iceberg_peak_size: bigint | string | null;
  iceberg_minimum_visible_size: bigint | string | null; iceberg_reserved_remaining: bigint | string | null;
  vega_time: bigint;
}

function orderOfV1Row(r: V1OrderRow): Order {
  const order: Order = {
    id: r.id, marketId: r.market_id, partyId: r.party_id, side: Number(r.side), price: r.price,
    size: BigInt(r.size), remaining: BigInt(r.remaining), timeInForce: Number(r.time_in_force), type: Number(r.type),
    createdAt: r.created_at, status: Number(r.status), expiresAt: r.expires_at, reference: r.reference,
    updatedAt: r.updated_at, version: BigInt(r.version), batchId: BigInt(r.batch_id), liquidityProvisionId: r.lp_id,
    postOnly: r.post_only !== 0n, reduceOnly: r.reduce_only !== 0n,
  };
  if (r.reason !== null) order.reason = Number(r.reason);
  if (r.pegged_reference !== null) order.peggedOrder = { reference: Number(r.pegged_reference), offset: r.pegged_offset ?? '' };
  if (r.iceberg_peak_size !== null) {
    order.icebergOrder = {
      peakSize: BigInt(r.iceberg_peak_size),
      minimumVisibleSize: BigInt(r.iceberg_minimum_visible_size ?? 0),
      reservedRemaining: BigInt(r.iceberg_reserved_remaining ?? 0),
    };
  }
  return order;
}
