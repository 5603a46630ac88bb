/**
 * The embedded store's queries: SQLite through better-sqlite3. The SQL of a
 * page comes from ../page-sql.ts with SQLite's dialect; blocks are written by
 * the writer thread (./writer.ts). better-sqlite3 is synchronous; the async
 * QueryStore methods wrap it so that callers work the same with either backend.
 */
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { BundleFilter, BundleKey } from '../../domain/bundle.js';
import type { OrderFilter, OrderKey, OrderVersionKey } from '../../domain/order.js';
import type { BlockChanges } from '../../domain/order-stream.js';
import { blockToken, type BlockStamp, type Page, type PageRequest } from '../../domain/page.js';
import { windowText, type RetentionStatus } from '../../domain/retention.js';
import {
  FIRST_BLOCK_SQL, blockChangesOf, changesStatement, currentOrderStatement, historyRowOf, versionPageRow,
  versionStateStatement, versionsStatements,
} from '../history-sql.js';
import { historyRowOrder } from '../history-row.js';
import { orderNodeJson } from '../order-node.js';
import { orderIdOfNode } from '../node-json.js';
import { bundleQueries, expandSql, orderQueries, type PageQueries } from '../page-sql.js';
import { assemblePage, orderStatsOf, type OrderStats } from '../plan.js';
import { fromU64 } from '../rows.js';
import type { CommittedBlock, QueryStore } from '../store.js';
import type { OpenDatabaseOptions } from './database.js';
import { SQLITE } from './dialect.js';
import { LAST_BLOCK_SQL, ReaderConnection, readLastBlock } from './reader.js';

/** Opens the store for queries; unless readOnly, it creates or migrates the file first. */
export function openSqliteStore(options: OpenDatabaseOptions & { statementCacheBytes?: number }): SqliteStore {
  return new SqliteStore(new ReaderConnection(options, options.statementCacheBytes), options.path);
}

/** Bytes of a file, 0 if it is not there (a WAL file between connections). */
function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

const RETENTION_SQL = 'SELECT setting, window_ns, rows_pruned, prune_ns, longest_batch_ns FROM retention WHERE only_row = 1';
const OLDEST_BLOCK_SQL = 'SELECT height, time FROM blocks ORDER BY height LIMIT 1';

export { LAST_BLOCK_SQL, readLastBlock };

/** How often the embedded store is asked whether a block was committed: well within the stream's 200 ms. */
const WATCH_POLL_MS = 25;

/** The page with the last block of the snapshot it was read in. */
function stamped<K>(page: Page<K>, last: CommittedBlock | undefined): Page<K> {
  return last === undefined ? page : { ...page, lastBlock: { height: last.height, time: last.time } };
}

export class SqliteStore implements QueryStore {
  private stats: { block: string; value: OrderStats } | undefined;

  constructor(private readonly connection: ReaderConnection, private readonly path: string) {}

  /** Both queries of a page in one snapshot. */
  private read<T>(fn: () => T): T {
    return this.connection.read(fn);
  }

  async listOrders(filter: OrderFilter, page: PageRequest<OrderKey>): Promise<Page<OrderKey>> {
    return this.listOrdersSync(filter, page);
  }

  async listBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>> {
    return this.listBundlesSync(filter, page);
  }

  async listRemovedBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>> {
    return this.read(() => {
      const last = this.lastBlockSync();
      const queries = bundleQueries(SQLITE, filter, page, 'signer_removed');
      return stamped(this.run(page, queries, (row) => ({ timestamp: row[1] as bigint, signatureId: row[2] as string })), last);
    });
  }

  async getOrder(id: string, version?: bigint): Promise<{ node: string | undefined; lastBlock?: BlockStamp }> {
    return this.read(() => {
      const last = this.lastBlockSync();
      let node: string | undefined;
      if (version === undefined) {
        const q = currentOrderStatement(SQLITE, id);
        node = this.connection.statement(q.sql).pluck(true).get(q.params) as string | undefined;
      } else {
        const q = versionStateStatement(SQLITE, id, version);
        const row = this.connection.statement(q.sql).raw(true).get(q.params) as unknown[] | undefined;
        node = row === undefined ? undefined : orderNodeJson(historyRowOrder(historyRowOf(row)));
      }
      return last === undefined ? { node } : { node, lastBlock: { height: last.height, time: last.time } };
    });
  }

  async listOrderVersions(id: string, page: PageRequest<OrderVersionKey>): Promise<Page<OrderVersionKey>> {
    return this.read(() => {
      const last = this.lastBlockSync();
      const { rows: q, beyond } = versionsStatements(SQLITE, id, page);
      const raw = this.connection.statement(q.sql).raw(true).all(q.params) as unknown[][];
      const found = beyond !== undefined && this.connection.statement(beyond.sql).pluck(true).get(beyond.params) !== undefined;
      return stamped(assemblePage(page, raw.map((r) => versionPageRow(historyRowOf(r))), found), last);
    });
  }

  async orderChanges(after: bigint, upTo: bigint, maxBlocks: number): Promise<BlockChanges[]> {
    const q = changesStatement(after, upTo, maxBlocks);
    const raw = this.read(() => this.connection.statement(q.sql).raw(true).all(q.params) as unknown[][]);
    return blockChangesOf(raw.map(historyRowOf));
  }

  async firstChangeHeight(): Promise<bigint> {
    const first = this.read(() => this.connection.statement(FIRST_BLOCK_SQL).pluck(true).get());
    return first === null || first === undefined ? 1n : fromU64(first);
  }

  /**
   * Polls the file's data_version, which changes when another connection (the
   * writer's) commits: a statement of microseconds, so it is asked often.
   */
  watchBlocks(onBlock: () => void): () => void {
    let seen: unknown;
    const poll = setInterval(() => {
      let version: unknown;
      try {
        version = this.connection.dataVersion();
      } catch {
        return; // closed: the caller stops the watch
      }
      if (version !== seen) {
        seen = version;
        onBlock();
      }
    }, WATCH_POLL_MS);
    poll.unref();
    return () => clearInterval(poll);
  }

  async lastBlock(): Promise<CommittedBlock | undefined> {
    return this.lastBlockSync();
  }

  async retentionStatus(): Promise<RetentionStatus> {
    const [r, oldest] = this.read(() => [
      this.connection.statement(RETENTION_SQL).get() as { setting: string; window_ns: bigint | null; rows_pruned: bigint; prune_ns: bigint; longest_batch_ns: bigint },
      this.connection.statement(OLDEST_BLOCK_SQL).get() as { height: unknown; time: bigint } | undefined,
    ] as const);
    return {
      retention: r.setting,
      ...(r.window_ns !== null && { prunedWith: windowText(r.window_ns) }),
      ...(oldest !== undefined && { oldestKeptBlock: { height: fromU64(oldest.height), time: oldest.time } }),
      rowsPruned: r.rows_pruned,
      pruneSeconds: Number(r.prune_ns) / 1e9,
      longestBatchSeconds: Number(r.longest_batch_ns) / 1e9,
      storeBytes: fileBytes(this.path) + fileBytes(`${this.path}-wal`),
    };
  }

  async close(): Promise<void> {
    this.closeSync();
  }

  closeSync(): void {
    this.connection.close();
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

  /** The statements kept prepared, and their estimated bytes; how often the connection was renewed to free them. */
  get statementCacheSize(): { entries: number; bytes: number; renewals: number } {
    return { ...this.connection.statementCacheSize, renewals: this.connection.renewals };
  }

  lastBlockSync(): CommittedBlock | undefined {
    return this.connection.lastBlock();
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
    return orderStatsOf(this.connection.countsStatement.all() as [string, bigint, bigint][]);
  }

  /** Runs a page's queries; `key` reads a row's listing key from its columns (json, k1, k2, ...). */
  private run<K>(page: PageRequest<K>, queries: PageQueries, key: (row: unknown[]) => K): Page<K> {
    const { rows: q, beyond } = queries;
    const raw = this.connection.statement(q.sql).raw(true).all(q.params) as unknown[][];
    const rows = raw.map((row) => ({ json: row[0] as string, key: key(row) }));
    const found = beyond !== undefined && this.connection.statement(beyond.sql).pluck(true).get(beyond.params) !== undefined;
    return assemblePage(page, rows, found);
  }

  private explain(queries: PageQueries | undefined): string[][] {
    if (queries === undefined) return [];
    return [queries.rows, ...(queries.beyond ? [queries.beyond] : [])].map((q) => {
      const rows = this.connection.prepareOnce(`EXPLAIN QUERY PLAN ${expandSql(q.sql, SQLITE)}`).all(q.params) as { detail: string }[];
      return rows.map((r) => r.detail);
    });
  }
}
