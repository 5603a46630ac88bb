/**
 * The embedded store: SQLite through better-sqlite3. Planning decisions come
 * from ./plan.ts; this file only turns them into SQL, and writes blocks.
 * better-sqlite3 is synchronous; the async Store methods wrap it so that a
 * backend with real I/O can stand in without the callers changing.
 */
import Database from 'better-sqlite3';
import type { BundleFilter, BundleKey } from '../domain/bundle.js';
import type { OrderFilter, OrderKey } from '../domain/order.js';
import type { Page, PageRequest } from '../domain/page.js';
import {
  assemblePage,
  planBundleQuery,
  planOrderQuery,
  planPage,
  orderKeyRange,
  scanRange,
  type BundleDimension,
  type BundlePathName,
  type KeyRange,
  type OrderDimension,
  type OrderPathName,
  type OrderPlan,
  type OrderStats,
  type SortDirection,
} from './plan.js';
import { bundleJsonSql, orderIdOfNode, orderJsonSql } from './sqlite-json.js';
import {
  CURRENT_FIELDS, MARKET_AT, PARTY_AT, SIGNER_ADDED_FIELDS, SIGNER_REMOVED_FIELDS, at, fromU64,
  GroupRows, u64, type CurrentField, type PackedHistory, type PreparedGroup, type SqlValue,
} from './sqlite-rows.js';
import { orderKeyOf } from './order-key.js';
import { checkSchema, migrate } from './sqlite-schema.js';
import type { CommittedBlock, Store } from './store.js';

export interface SqliteStoreOptions {
  /** The database file. Its folder must exist. */
  path: string;
  /**
   * Open for queries only, while another connection (process or thread)
   * writes. The file must exist at the current schema version.
   */
  readonly?: boolean;
}

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

// ---------------------------------------------------------------- SQL names

const ORDER_INDEX = {
  time: 'orders_by_time',
  live: 'orders_live_by_time',
  reference: 'orders_by_reference',
  party: 'orders_by_party',
  liveParty: 'orders_live_by_party',
  market: 'orders_by_market',
  liveMarket: 'orders_live_by_market',
  status: 'orders_by_status',
  type: 'orders_by_type',
  timeInForce: 'orders_by_time_in_force',
} as const satisfies Record<OrderPathName, string>;

/**
 * The condition that pins an index's leading column to one value (bound to the
 * ?). Indexes hold parties and markets by their interned number; an id never
 * stored has none, and `= NULL` matches nothing, as it should.
 */
const ORDER_PIN = {
  reference: 'o.reference = ?',
  partyId: 'o.party_no = (SELECT no FROM parties WHERE id = ?)',
  marketId: 'o.market_no = (SELECT no FROM markets WHERE id = ?)',
  status: 'o.status = ?',
  type: 'o.type = ?',
  timeInForce: 'o.time_in_force = ?',
} as const satisfies Record<OrderDimension, string>;

const BUNDLE_INDEX = {
  time: 'signer_added_by_time',
  nodeId: 'signer_added_by_validator',
  epochSeq: 'signer_added_by_epoch',
  submitter: 'signer_added_by_submitter',
} as const satisfies Record<BundlePathName, string>;

const BUNDLE_COLUMN = {
  nodeId: 'validator_id',
  epochSeq: 'epoch_seq',
  submitter: 'submitter',
} as const satisfies Record<BundleDimension, string>;

// ---------------------------------------------------------------- keyset SQL

/** One scan of an index, as SQL: a SELECT without ORDER BY or LIMIT. */
interface Arm {
  sql: string;
  params: SqlValue[];
}

/** Where a listing key (two columns) lies within a range, as row-value comparisons the index can seek on. */
function rangeConditions(
  keyColumns: readonly [string, string],
  range: KeyRange<readonly [SqlValue, SqlValue]>,
  params: SqlValue[],
): string[] {
  const row = `(${keyColumns[0]}, ${keyColumns[1]})`;
  const out: string[] = [];
  if (range.lower) {
    out.push(`${row} ${range.lower.inclusive ? '>=' : '>'} (?, ?)`);
    params.push(...range.lower.key);
  }
  if (range.upper) {
    out.push(`${row} ${range.upper.inclusive ? '<=' : '<'} (?, ?)`);
    params.push(...range.upper.key);
  }
  return out;
}

function armSql(select: string, from: string, conditions: string[]): string {
  return `SELECT ${select} FROM ${from}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}`;
}

const dir = (d: SortDirection) => (d === 'asc' ? 'ASC' : 'DESC');

/**
 * Several arms merged in key order. SQLite runs each arm as a co-routine along
 * its index and merges them (MERGE (UNION ALL)), reading no more of any arm
 * than the LIMIT needs and never sorting.
 */
function pageSql(arms: Arm[], direction: SortDirection, limit: number): Arm {
  const order = `ORDER BY k1 ${dir(direction)}, k2 ${dir(direction)} LIMIT ?`;
  return {
    sql: `${arms.map((a) => a.sql).join(' UNION ALL ')} ${order}`,
    params: [...arms.flatMap((a) => a.params), limit],
  };
}

/** Does any arm yield a row? UNION ALL runs the arms in turn and LIMIT 1 stops at the first row. */
function existsSql(arms: Arm[]): Arm {
  return { sql: `${arms.map((a) => a.sql).join(' UNION ALL ')} LIMIT 1`, params: arms.flatMap((a) => a.params) };
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * Stand-ins for the long JSON expressions in query text: the text (which
 * already encodes the query shape) is the cache key, and is built on every
 * request, so it stays short until a statement is prepared.
 */
const JSON_EXPRESSIONS: [token: string, sql: string][] = [
  ['/*order-json*/', orderJsonSql('o', 'm', 'p')],
  ['/*bundle-json*/', bundleJsonSql('b')],
];

function expand(sql: string): string {
  return JSON_EXPRESSIONS.reduce((text, [token, expression]) => text.replaceAll(token, expression), sql);
}

/** Bound statements by SQL text. */
class StatementCache {
  private readonly statements = new Map<string, Database.Statement>();
  constructor(private readonly db: Database.Database, private readonly capacity: number) {}

  get(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (s) {
      // Re-insert to mark it recently used; Map keeps insertion order.
      this.statements.delete(sql);
    } else {
      s = this.db.prepare(expand(sql));
      if (this.statements.size >= this.capacity) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, s);
    return s;
  }
}

// ---------------------------------------------------------------- orders SQL

/** What an arm selects, and the tables that needs joined to the order. */
interface Columns {
  select: string;
  joins: string;
}

/**
 * A page row, and what it reads beside the order: the ids of its market and
 * party (joined by number: a lookup by primary key, measured 15% cheaper per
 * row than a scalar subquery). Arms merge on the listing key (k1, k2); the
 * cursor takes the id from the node (orderIdOfNode).
 */
const ORDER_ROW: Columns = {
  select: '/*order-json*/ AS json, o.created_at AS k1, o.id_key AS k2',
  joins: ' JOIN markets AS m ON m.no = o.market_no JOIN parties AS p ON p.no = o.party_no',
};
const ORDER_EXISTS: Columns = { select: '1', joins: '' };
/** The listing key: (createdAt, id) ascending is (created_at, id_key) ascending (./order-key.ts). */
const ORDER_KEY: readonly [string, string] = ['o.created_at', 'o.id_key'];

function residualOrderConditions(r: OrderPlan['residual'], params: SqlValue[]): string[] {
  const out: string[] = [];
  const inList = (column: string, values: readonly (string | number)[] | undefined, interned?: 'parties' | 'markets') => {
    if (values === undefined) return;
    const list = placeholders(values.length);
    out.push(`o.${column} IN (${interned ? `SELECT no FROM ${interned} WHERE id IN (${list})` : list})`);
    params.push(...values);
  };
  inList('status', r.statuses);
  inList('type', r.types);
  inList('time_in_force', r.timeInForces);
  inList('party_no', r.partyIds, 'parties');
  inList('market_no', r.marketIds, 'markets');
  if (r.reference !== undefined) {
    out.push('o.reference = ?');
    params.push(r.reference);
  }
  if (r.excludeLiquidity) out.push(`o.lp_id = ''`);
  if (r.liveOnly) out.push('o.live = 1');
  return out;
}

/** A key range with each key as the values of the two key columns. */
function asColumns<K>(range: KeyRange<K>, columns: (key: K) => readonly [SqlValue, SqlValue]): KeyRange<readonly [SqlValue, SqlValue]> {
  const out: KeyRange<readonly [SqlValue, SqlValue]> = {};
  if (range.lower) out.lower = { key: columns(range.lower.key), inclusive: range.lower.inclusive };
  if (range.upper) out.upper = { key: columns(range.upper.key), inclusive: range.upper.inclusive };
  return out;
}

/** One arm per branch of the plan: the branch's values pin the index's leading columns. */
function orderArms(plan: OrderPlan, range: KeyRange<OrderKey>, columns: Columns): Arm[] {
  const index = ORDER_INDEX[plan.path.name as OrderPathName];
  const keyRange = asColumns(range, (k) => [k.createdAt, orderKeyOf(k.id)]);
  return plan.branches.map((values) => {
    const params: SqlValue[] = [];
    const conditions: string[] = plan.path.dimensions.map((d) => ORDER_PIN[d]);
    params.push(...values);
    // Written out literally: SQLite uses a partial index only when the query states its condition.
    if (plan.path.liveOnly) conditions.push('o.live = 1');
    if (plan.path.referencedOnly) conditions.push(`o.reference <> ''`);
    conditions.push(...residualOrderConditions(plan.residual, params));
    conditions.push(...rangeConditions(ORDER_KEY, keyRange, params));
    return { sql: armSql(columns.select, `orders_current AS o INDEXED BY ${index}${columns.joins}`, conditions), params };
  });
}

// ---------------------------------------------------------------- bundles SQL

const BUNDLE_ROW = '/*bundle-json*/ AS json, b.timestamp AS k1, b.signature_id AS k2';
const BUNDLE_KEY: readonly [string, string] = ['b.timestamp', 'b.signature_id'];

function bundleArm(filter: BundleFilter, range: KeyRange<BundleKey>, select: string): Arm {
  const plan = planBundleQuery(filter);
  const params: SqlValue[] = [];
  const conditions: string[] = [];
  const equal = (d: BundleDimension, value: string | bigint | undefined) => {
    if (value === undefined) return;
    conditions.push(`b.${BUNDLE_COLUMN[d]} = ?`);
    params.push(typeof value === 'bigint' ? u64(value) : value);
  };
  // The path's own column first, so the index's leading column is pinned.
  if (plan.path.dimension !== undefined) equal(plan.path.dimension, plan.value);
  equal('nodeId', plan.residual.nodeId);
  equal('epochSeq', plan.residual.epochSeq);
  equal('submitter', plan.residual.submitter);
  conditions.push(...rangeConditions(BUNDLE_KEY, asColumns(range, (k) => [k.timestamp, k.signatureId]), params));
  const index = BUNDLE_INDEX[plan.path.name as BundlePathName];
  return { sql: armSql(select, `signer_added AS b INDEXED BY ${index}`, conditions), params };
}

/** The SQL one page request runs: its rows, and whether a row lies beyond the cursor. */
interface PageQueries {
  rows: Arm;
  beyond?: Arm;
}

/** The queries of a listOrders call; undefined when the filter can match nothing. */
function orderQueries(filter: OrderFilter, page: PageRequest<OrderKey>, stats: OrderStats): PageQueries | undefined {
  const scans = planPage(page);
  const plan = planOrderQuery(filter, stats);
  if (plan === undefined) return undefined;
  const rows = pageSql(orderArms(plan, orderKeyRange(scans.rows, plan.dateRange), ORDER_ROW), scans.rows.direction, scans.rows.limit);
  if (scans.beyond === undefined) return { rows };
  return { rows, beyond: existsSql(orderArms(plan, orderKeyRange(scans.beyond, plan.dateRange), ORDER_EXISTS)) };
}

function bundleQueries(filter: BundleFilter, page: PageRequest<BundleKey>): PageQueries {
  const scans = planPage(page);
  const rows = pageSql([bundleArm(filter, scanRange(scans.rows), BUNDLE_ROW)], scans.rows.direction, scans.rows.limit);
  if (scans.beyond === undefined) return { rows };
  return { rows, beyond: existsSql([bundleArm(filter, scanRange(scans.beyond), '1')]) };
}

// ---------------------------------------------------------------- writing

function upsertSql(table: string, columns: readonly string[], conflict: string[]): string {
  const updates = columns.filter((c) => !conflict.includes(c)).map((c) => `${c} = excluded.${c}`);
  return (
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders(columns.length)}) ` +
    `ON CONFLICT (${conflict.join(', ')}) DO UPDATE SET ${updates.join(', ')}`
  );
}

/**
 * Indexed columns an order keeps for life (market, party, creation time,
 * reference, type), and those its events change (status, time in force,
 * liveness). SQLite rewrites an index entry whenever an UPDATE assigns one of
 * its columns, even to the same value; most events only fill or amend an order,
 * so the writer assigns indexed columns only when they really changed.
 */
const LIFELONG: readonly CurrentField[] = ['market_no', 'party_no', 'created_at', 'reference', 'type'];
const CHANGING: readonly CurrentField[] = ['status', 'time_in_force', 'live'];
const INDEXED: readonly CurrentField[] = [...LIFELONG, ...CHANGING];

/** The columns order_counts counts, by the dimension name the planner uses. */
const COUNTED = [['status', 'status'], ['type', 'type'], ['timeInForce', 'time_in_force'], ['live', 'live']] as const;
const COUNTED_AT = COUNTED.map(([, column]) => at(column));
const COUNTED_STORED_AT = COUNTED.map(([, column]) => INDEXED.indexOf(column));

/**
 * The columns an order is found by: derived from its id, never assigned by an
 * update. id_key ends every listing index, so assigning it, even to the same
 * value, would rewrite ten index entries per update.
 */
const IDENTITY: readonly CurrentField[] = ['id_bytes', 'id_key'];

function updateSql(columns: readonly CurrentField[]): { sql: string; positions: number[] } {
  const set = columns.filter((c) => !IDENTITY.includes(c));
  return {
    sql: `UPDATE orders_current SET ${set.map((c) => `${c} = ?`).join(', ')} WHERE id_bytes = ?`,
    positions: [...set.map(at), at('id_bytes')],
  };
}

/** A prepared UPDATE of some columns, bound from a full order row. */
class PartialUpdate {
  private readonly statement: Database.Statement;
  private readonly positions: number[];
  constructor(db: Database.Database, columns: readonly CurrentField[]) {
    const { sql, positions } = updateSql(columns);
    this.statement = db.prepare(sql);
    this.positions = positions;
  }
  run(row: SqlValue[]): void {
    this.statement.run(this.positions.map((i) => row[i]));
  }
}

/** Is the stored value (integers come back as bigint) the one about to be written? */
function same(stored: unknown, next: SqlValue): boolean {
  return typeof next === 'number' ? stored === BigInt(next) : stored === next;
}

/**
 * Numbers for party or market ids, which indexes hold instead of 64 hex
 * characters. A number, once committed, never changes, so it is cached; the
 * cache is dropped when a transaction that may have added numbers fails, and
 * when it grows large.
 */
class InternedIds {
  private static readonly CACHE_LIMIT = 1 << 17;
  private readonly cache = new Map<string, number>();
  private readonly select: Database.Statement;
  private readonly insert: Database.Statement;

  constructor(db: Database.Database, table: 'parties' | 'markets') {
    this.select = db.prepare(`SELECT no FROM ${table} WHERE id = ?`).pluck(true);
    this.insert = db.prepare(`INSERT INTO ${table} (id) VALUES (?)`);
  }

  no(id: string): number {
    let n = this.cache.get(id);
    if (n !== undefined) return n;
    const stored = this.select.get(id) as bigint | undefined;
    n = Number(stored ?? this.insert.run(id).lastInsertRowid);
    if (this.cache.size >= InternedIds.CACHE_LIMIT) this.cache.clear();
    this.cache.set(id, n);
    return n;
  }

  forget(): void {
    this.cache.clear();
  }
}

/**
 * History rows bound per INSERT: a statement's fixed cost, paid per row, was
 * a third of a history row's cost.
 */
const HISTORY_ROWS_PER_INSERT = 64;

class BlockWriter {
  private readonly selectIndexed: Database.Statement;
  private readonly insertCurrent: Database.Statement;
  private readonly updateUnindexed: PartialUpdate;
  private readonly updateChanging: PartialUpdate;
  private readonly updateAll: PartialUpdate;
  private readonly insertHistory: Database.Statement;
  private readonly insertHistoryRows: Database.Statement;
  private readonly parties: InternedIds;
  private readonly markets: InternedIds;
  private readonly addCount: Database.Statement;
  private readonly insertSignature: Database.Statement;
  private readonly upsertAdded: Database.Statement;
  private readonly upsertRemoved: Database.Statement;
  private readonly setLastBlock: Database.Statement;
  private readonly insertBlock: Database.Statement;
  readonly write: (group: PreparedGroup) => void;

  constructor(db: Database.Database, private readonly lastBlock: () => CommittedBlock | undefined) {
    this.selectIndexed = db.prepare(`SELECT ${INDEXED.join(', ')} FROM orders_current WHERE id_bytes = ?`).raw(true);
    this.insertCurrent = db.prepare(
      `INSERT INTO orders_current (${CURRENT_FIELDS.join(', ')}) VALUES (${placeholders(CURRENT_FIELDS.length)})`,
    );
    const unindexed = CURRENT_FIELDS.filter((c) => !INDEXED.includes(c));
    this.updateUnindexed = new PartialUpdate(db, unindexed);
    this.updateChanging = new PartialUpdate(db, [...unindexed, ...CHANGING]);
    this.updateAll = new PartialUpdate(db, CURRENT_FIELDS);
    // Each block writes an order once; only two blocks with the same time could meet, and then the later wins.
    const history = (rows: number) =>
      db.prepare(`INSERT OR REPLACE INTO orders_history (vega_time, id_bytes, message) VALUES ${Array(rows).fill('(?, ?, ?)').join(', ')}`);
    this.insertHistory = history(1);
    // Rows of a statement are inserted in order, so a later state still replaces an earlier one.
    this.insertHistoryRows = history(HISTORY_ROWS_PER_INSERT);
    this.parties = new InternedIds(db, 'parties');
    this.markets = new InternedIds(db, 'markets');
    this.addCount = db.prepare(
      'INSERT INTO order_counts (dimension, value, n) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n',
    );
    // Same resource, same bytes: the same signature seen again.
    this.insertSignature = db.prepare(
      'INSERT INTO node_signatures (resource_id, sig, kind, vega_time) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.upsertAdded = db.prepare(upsertSql('signer_added', SIGNER_ADDED_FIELDS, ['signature_id']));
    this.upsertRemoved = db.prepare(upsertSql('signer_removed', SIGNER_REMOVED_FIELDS, ['signature_id']));
    this.setLastBlock = db.prepare(
      'INSERT INTO last_block (only_row, height, time, chain_id, hash) VALUES (1, ?, ?, ?, ?) ' +
        'ON CONFLICT (only_row) DO UPDATE SET ' +
        'height = excluded.height, time = excluded.time, chain_id = excluded.chain_id, hash = excluded.hash',
    );
    this.insertBlock = db.prepare('INSERT INTO blocks (height, hash, time) VALUES (?, ?, ?)');
    // IMMEDIATE takes the write lock up front, so a concurrent writer waits instead of failing mid-block.
    const transaction = db.transaction((group: PreparedGroup) => this.writeGroup(group)).immediate;
    this.write = (group) => {
      try {
        transaction(group);
      } catch (e) {
        // Numbers handed out in the rolled-back transaction no longer exist.
        this.parties.forget();
        this.markets.forget();
        throw e;
      }
    };
  }

  /**
   * One transaction's blocks. History gets each order's last state in each
   * block; the current state only the last state in the group. An order placed
   * and filled within a group so never enters (and leaves) the live indexes,
   * and each index entry an order's changes move is moved once per group.
   */
  private writeGroup(group: PreparedGroup): void {
    let last = this.lastBlock()?.height;
    for (const { height, time, hash } of group.blocks) {
      // Checked under the write lock: no other writer can slip a block in between.
      if (last !== undefined && height <= last) {
        throw new Error(`block ${height} is not newer than the last stored block ${last}`);
      }
      last = height;
      this.insertBlock.run(u64(height), hash, time);
    }
    this.writeHistory(group.history);
    for (const row of group.signatures) this.insertSignature.run(row);
    for (const row of group.added) this.upsertAdded.run(row);
    for (const row of group.removed) this.upsertRemoved.run(row);
    // Per COUNTED dimension: value -> change in its number of orders.
    const counts = COUNTED.map(() => new Map<number, number>());
    const marketNos = group.markets.map((id) => this.markets.no(id));
    const partyNos = group.parties.map((id) => this.parties.no(id));
    for (const row of group.latest) {
      row[MARKET_AT] = marketNos[row[MARKET_AT] as number]!;
      row[PARTY_AT] = partyNos[row[PARTY_AT] as number]!;
      this.writeCurrent(row, counts);
    }
    counts.forEach((deltas, d) => {
      for (const [value, delta] of deltas) if (delta !== 0) this.addCount.run(COUNTED[d]![0], value, delta);
    });
    this.setLastBlock.run(u64(group.last.height), group.last.time, group.last.chainId, group.last.hash);
  }

  private writeHistory({ times, ids, messages, ends }: PackedHistory): void {
    const row = (i: number, into: SqlValue[], offset: number) => {
      into[offset] = times[i]!;
      into[offset + 1] = ids.subarray(32 * i, 32 * i + 32);
      into[offset + 2] = messages.subarray(i === 0 ? 0 : ends[i - 1], ends[i]);
    };
    const many: SqlValue[] = new Array(3 * HISTORY_ROWS_PER_INSERT);
    let i = 0;
    for (; i + HISTORY_ROWS_PER_INSERT <= times.length; i += HISTORY_ROWS_PER_INSERT) {
      for (let j = 0; j < HISTORY_ROWS_PER_INSERT; j++) row(i + j, many, 3 * j);
      this.insertHistoryRows.run(many);
    }
    const one: SqlValue[] = new Array(3);
    for (; i < times.length; i++) {
      row(i, one, 0);
      this.insertHistory.run(one);
    }
  }

  /** Writes the current state (a row of CURRENT_FIELDS) with the cheapest statement that is still exact. */
  private writeCurrent(row: SqlValue[], counts: Map<number, number>[]): void {
    const stored = this.selectIndexed.get(row[at('id_bytes')]) as unknown[] | undefined;
    const count = (values: readonly unknown[], positions: readonly number[], delta: number) => {
      counts.forEach((deltas, d) => {
        const value = Number(values[positions[d]!]);
        deltas.set(value, (deltas.get(value) ?? 0) + delta);
      });
    };
    if (stored === undefined) {
      this.insertCurrent.run(row);
      count(row, COUNTED_AT, 1);
      return;
    }
    const unchanged = (c: CurrentField) => same(stored[INDEXED.indexOf(c)], row[at(c)]!);
    if (INDEXED.every(unchanged)) return this.updateUnindexed.run(row);
    count(stored, COUNTED_STORED_AT, -1);
    count(row, COUNTED_AT, 1);
    if (LIFELONG.every(unchanged)) this.updateChanging.run(row);
    else this.updateAll.run(row);
  }
}

// ---------------------------------------------------------------- the store

/**
 * The writer keeps the index pages it dirties all over the file in its cache;
 * readers mostly read through the memory map, which the OS page cache backs.
 */
const WRITER_CACHE_KIB = 256 * 1024;
const READER_CACHE_KIB = 64 * 1024;
const MMAP_BYTES = 2 ** 31;
const BUSY_TIMEOUT_MS = 10_000;
/**
 * Pages of WAL before an automatic checkpoint (SQLite's default is 1000).
 * Each block dirties about 300 scattered index pages; checkpointing less
 * often writes a page rewritten by many blocks back once, and fsyncs less.
 * 100k pages (a WAL of up to 400 MB, replayed on open after a crash) ingested
 * 11-20% faster than 20k; 50k made no difference.
 */
const WAL_AUTOCHECKPOINT_PAGES = 100_000;

export class SqliteStore implements Store<GroupRows> {
  private readonly db: Database.Database;
  private readonly statements: StatementCache;
  private readonly writer: BlockWriter | undefined;
  private readonly lastBlockStatement: Database.Statement;
  private readonly blockHashesStatement: Database.Statement;
  private readonly countsStatement: Database.Statement;
  private readonly read: <T>(fn: () => T) => T;

  constructor(options: SqliteStoreOptions) {
    const readonly = options.readonly ?? false;
    this.db = new Database(options.path, { readonly, fileMustExist: readonly });
    try {
      const db = this.db;
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      if (!readonly) {
        db.pragma('journal_mode = WAL');
        // In WAL mode NORMAL loses at most the last commits on power loss, never consistency.
        db.pragma('synchronous = NORMAL');
        db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      }
      db.pragma(`cache_size = -${readonly ? READER_CACHE_KIB : WRITER_CACHE_KIB}`);
      db.pragma(`mmap_size = ${MMAP_BYTES}`);
      db.pragma('temp_store = MEMORY');
      // Every integer comes back as a bigint: 64-bit values must never be rounded.
      db.defaultSafeIntegers(true);
      if (readonly) checkSchema(db);
      else migrate(db);
      this.statements = new StatementCache(db, 512);
      this.lastBlockStatement = db.prepare('SELECT height, time, chain_id, hash FROM last_block WHERE only_row = 1');
      this.blockHashesStatement = db.prepare('SELECT height, hash FROM blocks WHERE height BETWEEN ? AND ?').raw(true);
      this.writer = readonly ? undefined : new BlockWriter(db, () => this.lastBlockSync());
      this.countsStatement = db.prepare('SELECT dimension, value, n FROM order_counts').raw(true);
      // A deferred transaction: both queries of a page read the same snapshot.
      const tx = db.transaction((fn: () => unknown) => fn());
      this.read = <T>(fn: () => T) => tx(fn) as T;
    } catch (e) {
      this.db.close();
      throw e;
    }
  }

  async listOrders(filter: OrderFilter, page: PageRequest<OrderKey>): Promise<Page<OrderKey>> {
    return this.listOrdersSync(filter, page);
  }

  async listBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>> {
    return this.listBundlesSync(filter, page);
  }

  async lastBlock(): Promise<CommittedBlock | undefined> {
    return this.lastBlockSync();
  }

  async blockHashes(from: bigint, to: bigint): Promise<Map<bigint, string>> {
    return this.blockHashesSync(from, to);
  }

  newBatch(): GroupRows {
    return new GroupRows();
  }

  async write(batch: GroupRows): Promise<void> {
    const group = batch.finish();
    if (group !== undefined) this.writePreparedSync(group);
  }

  async close(): Promise<void> {
    this.closeSync();
  }

  closeSync(): void {
    if (this.db.open) this.db.close();
  }

  // The synchronous core, for callers that run in a worker or a benchmark loop.

  listOrdersSync(filter: OrderFilter, page: PageRequest<OrderKey>): Page<OrderKey> {
    return this.read(() => {
      const queries = orderQueries(filter, page, this.orderStats());
      if (queries === undefined) return this.stamped({ rows: [], hasNextPage: false, hasPreviousPage: false });
      return this.stamped(this.run(page, queries, (row) => ({ createdAt: row[1] as bigint, id: orderIdOfNode(row[0] as string) })));
    });
  }

  listBundlesSync(filter: BundleFilter, page: PageRequest<BundleKey>): Page<BundleKey> {
    return this.read(() =>
      this.stamped(this.run(page, bundleQueries(filter, page), (row) => ({ timestamp: row[1] as bigint, signatureId: row[2] as string }))));
  }

  /** The page with the last block of the snapshot it was read in (call inside that read). */
  private stamped<K>(page: Page<K>): Page<K> {
    const last = this.lastBlockSync();
    return last === undefined ? page : { ...page, lastBlock: { height: last.height, time: last.time } };
  }

  lastBlockSync(): CommittedBlock | undefined {
    const row = this.lastBlockStatement.get() as { height: unknown; time: bigint; chain_id: string; hash: string } | undefined;
    return row && { height: fromU64(row.height), time: row.time, chainId: row.chain_id, hash: row.hash };
  }

  blockHashesSync(from: bigint, to: bigint): Map<bigint, string> {
    const rows = this.blockHashesStatement.all(u64(from), u64(to)) as [unknown, string][];
    return new Map(rows.map(([height, hash]) => [fromU64(height), hash]));
  }

  /** Writes blocks prepared elsewhere (see ./sqlite-writer.ts), in one transaction. */
  writePreparedSync(group: PreparedGroup): void {
    if (this.writer === undefined) throw new Error('the store was opened read-only');
    this.writer.write(group);
  }

  /**
   * EXPLAIN QUERY PLAN of the queries one listOrders call runs (page rows,
   * then the existence check when there is a cursor): for tests and for
   * anyone asking why a query is slow.
   */
  explainOrders(filter: OrderFilter, page: PageRequest<OrderKey>): string[][] {
    return this.explain(orderQueries(filter, page, this.orderStats()));
  }

  /** As explainOrders, for listBundles. */
  explainBundles(filter: BundleFilter, page: PageRequest<BundleKey>): string[][] {
    return this.explain(bundleQueries(filter, page));
  }

  /** The planner's view of the current orders. */
  orderStats(): OrderStats {
    const counts = new Map<string, number>();
    let total = 0;
    for (const [dimension, value, n] of this.countsStatement.all() as [string, bigint, bigint][]) {
      counts.set(`${dimension}:${value}`, Number(n));
      if (dimension === 'status') total += Number(n);
    }
    return {
      total,
      live: counts.get('live:1') ?? 0,
      count: (dimension, value) => counts.get(`${dimension}:${value}`) ?? 0,
    };
  }

  /** Runs a page's queries; `key` reads a row's listing key from its columns (json, k1, k2, ...). */
  private run<K>(page: PageRequest<K>, queries: PageQueries, key: (row: unknown[]) => K): Page<K> {
    const { rows: q, beyond } = queries;
    const raw = this.statements.get(q.sql).raw(true).all(q.params) as unknown[][];
    const rows = raw.map((row) => ({ json: row[0] as string, key: key(row) }));
    const found = beyond !== undefined && this.statements.get(beyond.sql).pluck(true).get(beyond.params) !== undefined;
    return assemblePage(page, rows, found);
  }

  private explain(queries: PageQueries | undefined): string[][] {
    if (queries === undefined) return [];
    return [queries.rows, ...(queries.beyond ? [queries.beyond] : [])].map((q) => {
      const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${expand(q.sql)}`).all(q.params) as { detail: string }[];
      return rows.map((r) => r.detail);
    });
  }
}
