/**
 * The embedded store's queries: SQLite through better-sqlite3. The SQL of a
 * page comes from ../page-sql.ts with SQLite's dialect; blocks are written by
 * the writer thread (./writer.ts). better-sqlite3 is synchronous; the async
 * QueryStore methods wrap it so that callers work the same with either backend.
 */
import type Database from 'better-sqlite3';
import type { BundleFilter, BundleKey } from '../../domain/bundle.js';
import type { OrderFilter, OrderKey } from '../../domain/order.js';
import { blockToken, type Page, type PageRequest } from '../../domain/page.js';
import { orderIdOfNode } from '../node-json.js';
import { bundleQueries, expandSql, orderQueries, type PageQueries } from '../page-sql.js';
import { assemblePage, orderStatsOf, type OrderStats } from '../plan.js';
import { fromU64 } from '../rows.js';
import type { CommittedBlock, QueryStore } from '../store.js';
import { openDatabase, type OpenDatabaseOptions } from './database.js';
import { SQLITE } from './dialect.js';

/** Opens the store for queries; unless readOnly, it creates or migrates the file first. */
export function openSqliteStore(options: OpenDatabaseOptions): SqliteStore {
  return new SqliteStore(openDatabase(options));
}

/** The last committed block, as both the store and the writer read it. */
export function readLastBlock(statement: Database.Statement): CommittedBlock | undefined {
  const row = statement.get() as { height: unknown; time: bigint; chain_id: string; hash: string } | undefined;
  return row && { height: fromU64(row.height), time: row.time, chainId: row.chain_id, hash: row.hash };
}

export const LAST_BLOCK_SQL = 'SELECT height, time, chain_id, hash FROM last_block WHERE only_row = 1';

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

/** The page with the last block of the snapshot it was read in. */
function stamped<K>(page: Page<K>, last: CommittedBlock | undefined): Page<K> {
  return last === undefined ? page : { ...page, lastBlock: { height: last.height, time: last.time } };
}

export class SqliteStore implements QueryStore {
  private readonly statements: StatementCache;
  private readonly lastBlockStatement: Database.Statement;
  private readonly countsStatement: Database.Statement;
  private readonly read: <T>(fn: () => T) => T;
  private stats: { block: string; value: OrderStats } | undefined;

  constructor(private readonly db: Database.Database) {
    this.statements = new StatementCache(db, 512);
    this.lastBlockStatement = db.prepare(LAST_BLOCK_SQL);
    this.countsStatement = db.prepare('SELECT dimension, value, n FROM order_counts').raw(true);
    // A deferred transaction: both queries of a page read the same snapshot.
    const tx = db.transaction((fn: () => unknown) => fn());
    this.read = <T>(fn: () => T) => tx(fn) as T;
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
    return readLastBlock(this.lastBlockStatement);
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
