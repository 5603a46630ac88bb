/**
 * The embedded store: SQLite through better-sqlite3. The SQL of a page comes
 * from ../page-sql.ts with SQLite's dialect, blocks are written by
 * ./block-writer.ts. better-sqlite3 is synchronous; the async Store methods
 * wrap it so that callers work the same with either backend.
 */
import Database from 'better-sqlite3';
import type { BundleFilter, BundleKey } from '../../domain/bundle.js';
import type { OrderFilter, OrderKey } from '../../domain/order.js';
import { blockToken, type Page, type PageRequest } from '../../domain/page.js';
import { orderIdOfNode } from '../node-json.js';
import { bundleQueries, expandSql, orderQueries, type PageQueries } from '../page-sql.js';
import { assemblePage, orderStatsOf, type OrderStats } from '../plan.js';
import { fromU64, GroupRows, u64, type PreparedGroup } from '../rows.js';
import type { CommittedBlock, Store } from '../store.js';
import { BlockWriter } from './block-writer.js';
import { SQLITE } from './dialect.js';
import { checkSchema, migrate } from './schema.js';

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
      s = this.db.prepare(expandSql(sql, SQLITE));
      if (this.statements.size >= this.capacity) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, s);
    return s;
  }
}

// ---------------------------------------------------------------- the store

/**
 * The writer keeps the index pages it dirties all over the file in its cache,
 * and reads the rest through a memory map. Readers read with plain reads
 * into a small cache of their own, the OS page cache behind it: a memory map
 * counted every store page a reader had touched in its process's resident
 * memory (370 MB per HTTP worker on the 10M-order store, against 150 MB
 * without), and bought no query rate (raw page-50 queries of six shapes
 * on that store, alternated runs: within each other's noise). Nor did a
 * reader cache of 32 MB rather than 8 (raw pages of 50 and 1000 rows from
 * 4,000 cursors of the 1M-order store, alternated: 1,959-2,042 against
 * 2,211-2,285 q/s and 94-168 against 139-199), which cost each HTTP worker
 * 25-30 MB.
 */
const WRITER_CACHE_KIB = 256 * 1024;
const READER_CACHE_KIB = 8 * 1024;
const WRITER_MMAP_BYTES = 2 ** 31;
const BUSY_TIMEOUT_MS = 10_000;
/**
 * Bytes of WAL before an automatic checkpoint (SQLite's default is 1000
 * pages). Each block dirties about 300 scattered index pages; checkpointing
 * less often writes a page rewritten by many blocks back once, and fsyncs
 * less. 400 MB (replayed on open after a crash) ingested 11-20% faster than
 * 80 MB; 200 MB made no difference (measured with 4 KB pages).
 */
const WAL_AUTOCHECKPOINT_BYTES = 400 << 20;
/**
 * Bytes per database page of a store created now (SQLite's default is 4096;
 * a store keeps the size it was created with). Measured side by side, builds
 * alternated with the same WAL checkpoint threshold: ingesting 1.19M events
 * ran 1.06-1.14x as fast as with 4 KB pages (8 KB ran slower, 32 and 64 KB
 * no faster than 16), and the 1M-order store answered raw pages of 1000 in
 * 0.79-0.95 of the time and pages of 50 in 0.90-1.05, at 1% more bytes.
 * Fewer, wider pages mean fewer B-tree levels and splits for the writer's
 * 11 index entries per order.
 */
export const PAGE_BYTES = 16_384;

/** The page with the last block of the snapshot it was read in. */
function stamped<K>(page: Page<K>, last: CommittedBlock | undefined): Page<K> {
  return last === undefined ? page : { ...page, lastBlock: { height: last.height, time: last.time } };
}

export class SqliteStore implements Store<GroupRows> {
  private readonly db: Database.Database;
  private readonly statements: StatementCache;
  private readonly writer: BlockWriter | undefined;
  private readonly lastBlockStatement: Database.Statement;
  private readonly blockHashesStatement: Database.Statement;
  private readonly countsStatement: Database.Statement;
  private readonly read: <T>(fn: () => T) => T;
  private stats: { block: string; value: OrderStats } | undefined;

  constructor(options: SqliteStoreOptions) {
    const readonly = options.readonly ?? false;
    this.db = new Database(options.path, { readonly, fileMustExist: readonly });
    try {
      const db = this.db;
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      if (!readonly) {
        // Only a database without pages takes a page size; then WAL mode, which fixes it.
        db.pragma(`page_size = ${PAGE_BYTES}`);
        db.pragma('journal_mode = WAL');
        // In WAL mode NORMAL loses at most the last commits on power loss, never consistency.
        db.pragma('synchronous = NORMAL');
        db.pragma(`wal_autocheckpoint = ${Math.round(WAL_AUTOCHECKPOINT_BYTES / Number(db.pragma('page_size', { simple: true })))}`);
      }
      db.pragma(`cache_size = -${readonly ? READER_CACHE_KIB : WRITER_CACHE_KIB}`);
      db.pragma(`mmap_size = ${readonly ? 0 : WRITER_MMAP_BYTES}`);
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
      const last = this.lastBlockSync();
      const queries = orderQueries(SQLITE, filter, page, this.statsAt(last));
      if (queries === undefined) return stamped({ rows: [], hasNextPage: false, hasPreviousPage: false }, last);
      return stamped(this.run(page, queries, (row) => ({ createdAt: row[1] as bigint, id: orderIdOfNode(row[0] as string) })), last);
    });
  }

  listBundlesSync(filter: BundleFilter, page: PageRequest<BundleKey>): Page<BundleKey> {
    return this.read(() => {
      const last = this.lastBlockSync();
      return stamped(this.run(page, bundleQueries(SQLITE, filter, page), (row) => ({ timestamp: row[1] as bigint, signatureId: row[2] as string })), last);
    });
  }

  /**
   * The planner's counts as of the last block: they change only when a block
   * commits, so they are read once per block, not once per page.
   */
  private statsAt(last: CommittedBlock | undefined): OrderStats {
    const block = blockToken(last);
    if (this.stats?.block !== block) this.stats = { block, value: this.orderStats() };
    return this.stats.value;
  }

  lastBlockSync(): CommittedBlock | undefined {
    const row = this.lastBlockStatement.get() as { height: unknown; time: bigint; chain_id: string; hash: string } | undefined;
    return row && { height: fromU64(row.height), time: row.time, chainId: row.chain_id, hash: row.hash };
  }

  blockHashesSync(from: bigint, to: bigint): Map<bigint, string> {
    const rows = this.blockHashesStatement.all(u64(from), u64(to)) as [unknown, string][];
    return new Map(rows.map(([height, hash]) => [fromU64(height), hash]));
  }

  /** Writes blocks prepared elsewhere (see ./writer.ts), in one transaction. */
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
    return this.explain(orderQueries(SQLITE, filter, page, this.orderStats()));
  }

  /** As explainOrders, for listBundles. */
  explainBundles(filter: BundleFilter, page: PageRequest<BundleKey>): string[][] {
    return this.explain(bundleQueries(SQLITE, filter, page));
  }

  /** The planner's view of the current orders. */
  orderStats(): OrderStats {
    return orderStatsOf(this.countsStatement.all() as [string, bigint, bigint][]);
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
      const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${expandSql(q.sql, SQLITE)}`).all(q.params) as { detail: string }[];
      return rows.map((r) => r.detail);
    });
  }
}
