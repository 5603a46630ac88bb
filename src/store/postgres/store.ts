/**
 * The PostgreSQL store's queries. They come from ../page-sql.ts with
 * PostgreSQL's dialect, through a pool; blocks are written by ./writer.ts on
 * a connection of its own that holds the writer lock. Any number of these
 * stores may read one database (or its replicas); one writer writes.
 */
import pg from 'pg';
import { InternalError } from '../../errors.js';
import type { BundleFilter, BundleKey } from '../../domain/bundle.js';
import type { OrderFilter, OrderKey, OrderVersionKey } from '../../domain/order.js';
import type { BlockChanges } from '../../domain/order-stream.js';
import { blockToken, type BlockStamp, type Page, type PageRequest } from '../../domain/page.js';
import { windowText, type RetentionStatus } from '../../domain/retention.js';
import {
  FIRST_BLOCK_SQL, blockChangesOf, changesStatement, currentOrderStatement, historyRowOf, versionPageRow,
  versionStateStatement, versionsStatements, type Statement,
} from '../history-sql.js';
import { historyRowOrder } from '../history-row.js';
import { orderNodeJson } from '../order-node.js';
import { watchBlocks } from './block-watch.js';
import { orderIdOfNode } from '../node-json.js';
import { bundleQueries, expandSql, orderQueries, type PageQueries } from '../page-sql.js';
import { assemblePage, orderStatsOf, type OrderStats } from '../plan.js';
import type { SqlValue } from '../rows.js';
import type { CommittedBlock, QueryStore, StoreLog } from '../store.js';
import { checkSession, newPool } from './connection.js';
import { numberedPlaceholders, POSTGRES } from './dialect.js';
import { fromPostgres } from './errors.js';
import { checkSchema, migrate } from './schema.js';
import { PreparedBudget, StatementTexts, type NamedStatement } from './statements.js';

export interface PostgresStoreOptions {
  url: string;
  /** Never migrate (SELECT rights suffice; a read replica will do). */
  readOnly?: boolean;
  /** Connections for queries (default 4). */
  poolSize?: number;
  /** A query is cancelled after this long, or once it has waited this long for a connection; 0 or absent: never. */
  queryTimeoutMs?: number | undefined;
  /** Bytes of statement text one connection may have prepared before it is replaced (./statements.ts). */
  preparedBytesPerConnection?: number;
  /** Where the store logs what it handles on its own. */
  log?: StoreLog | undefined;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const pool = newPool(options.url, options.poolSize ?? DEFAULT_POOL_SIZE, options.queryTimeoutMs);
  try {
    const client = await pool.connect();
    try {
      await checkSession(client);
      if (options.readOnly) {
        await checkSchema(client);
      } else {
        // A migration may take minutes: not the time limit of a query.
        await client.query('SET statement_timeout = 0');
        await migrate(client);
        await client.query('RESET statement_timeout');
      }
    } finally {
      client.release();
    }
  } catch (e) {
    await pool.end();
    throw fromPostgres(e, options.url);
  }
  return new PostgresStore(pool, options);
}

/** Queries run on the server's processes, not on this thread: a few connections keep both cores busy. */
const DEFAULT_POOL_SIZE = 4;

/**
 * The last block, joined to one row whether or not a block is stored: every
 * statement that names the block it read at reads it so, in its own snapshot.
 */
const LAST_BLOCK_JOIN = 'LEFT JOIN last_block AS l ON l.only_row = 1';

const blockStampOf = (height: string | null, time: bigint | null): BlockStamp | undefined =>
  (height === null || time === null ? undefined : { height: BigInt(height), time });

/**
 * A statement of `columns` columns and everything its answer names, in ONE
 * statement, so in one snapshot: its rows, each with three NULLs after, then a
 * row of `columns` NULLs, the last block's height and time, and whether
 * `beyond` finds a row. PostgreSQL runs the arms of a UNION ALL in turn
 * (Append), so the rows come first and in the order their subquery returns
 * them; the tests walk every row of many pages both ways.
 */
function stampedStatement(rows: Statement, columns: number, beyond?: Statement): Statement {
  const nulls = Array.from({ length: columns }, () => 'NULL').join(', ');
  return {
    sql:
      `SELECT q.*, NULL::numeric AS height, NULL::bigint AS time, NULL::boolean AS beyond FROM (${rows.sql}) AS q UNION ALL ` +
      `SELECT ${nulls}, l.height, l.time, ${beyond === undefined ? 'false' : `EXISTS (${beyond.sql})`} ` +
      `FROM (SELECT 1) AS one ${LAST_BLOCK_JOIN}`,
    params: [...rows.params, ...(beyond?.params ?? [])],
  };
}

/** A page's statement: its node and two key columns, stamped. */
const pageStatement = (q: PageQueries): Statement => stampedStatement(q.rows, 3, q.beyond);

/** The rows of a stampedStatement, and what its last row says. */
function unstamp(rows: unknown[][]): { rows: unknown[][]; lastBlock: BlockStamp | undefined; beyond: boolean } {
  const meta = rows.pop();
  if (meta === undefined) throw new InternalError('a stamped statement returned no block row');
  const [height, time, beyond] = meta.slice(-3) as [string | null, bigint | null, boolean | null];
  return { rows, lastBlock: blockStampOf(height, time), beyond: beyond === true };
}

const stamp = <T extends object>(value: T, lastBlock: BlockStamp | undefined): T & { lastBlock?: BlockStamp } =>
  (lastBlock === undefined ? value : { ...value, lastBlock });

export class PostgresStore implements QueryStore {
  private readonly texts = new StatementTexts();
  private readonly prepared: PreparedBudget;
  /**
   * The planner's counts, with the block they were read at ('' if unknown).
   * They change only when a block commits: a page that shows another block
   * drops them, and the next page reads them again.
   */
  private stats: { block: string; value: Promise<OrderStats> } | undefined;
  private lastBlockRead: Promise<CommittedBlock | undefined> | undefined;
  private nextLastBlock:
    | { promise: Promise<CommittedBlock | undefined>; resolve: (b: CommittedBlock | undefined) => void; reject: (e: unknown) => void }
    | undefined;

  constructor(private readonly pool: pg.Pool, private readonly options: PostgresStoreOptions) {
    this.prepared = new PreparedBudget(options.preparedBytesPerConnection);
  }

  async listOrders(filter: OrderFilter, page: PageRequest<OrderKey>): Promise<Page<OrderKey>> {
    const queries = orderQueries(POSTGRES, filter, page, await this.orderStats());
    if (queries === undefined) {
      // No order can match: the page is empty, stamped as any other.
      const last = await this.lastBlock();
      return stamp({ rows: [], hasNextPage: false, hasPreviousPage: false }, last && blockStampOf(String(last.height), last.time));
    }
    return this.run(page, queries, (json, k1) => ({ createdAt: k1, id: orderIdOfNode(json) }));
  }

  async listBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>> {
    return this.run(page, bundleQueries(POSTGRES, filter, page), (_json, k1, k2) => ({ timestamp: k1, signatureId: k2 as string }));
  }

  async listRemovedBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>> {
    return this.run(page, bundleQueries(POSTGRES, filter, page, 'signer_removed'), (_json, k1, k2) => ({ timestamp: k1, signatureId: k2 as string }));
  }

  async getOrder(id: string, version?: bigint): Promise<{ node: string | undefined; lastBlock?: BlockStamp }> {
    if (version === undefined) {
      const found = await this.stamped(stampedStatement(currentOrderStatement(POSTGRES, id), 1));
      return stamp({ node: found.rows[0]?.[0] as string | undefined }, found.lastBlock);
    }
    const found = await this.stamped(stampedStatement(versionStateStatement(POSTGRES, id, version), 7));
    const row = found.rows[0];
    return stamp({ node: row === undefined ? undefined : orderNodeJson(historyRowOrder(historyRowOf(row))) }, found.lastBlock);
  }

  async listOrderVersions(id: string, page: PageRequest<OrderVersionKey>): Promise<Page<OrderVersionKey>> {
    const { rows, beyond } = versionsStatements(POSTGRES, id, page);
    const found = await this.stamped(stampedStatement(rows, 7, beyond));
    return stamp(assemblePage(page, found.rows.map((r) => versionPageRow(historyRowOf(r))), found.beyond), found.lastBlock);
  }

  async orderChanges(after: bigint, upTo: bigint, maxBlocks: number): Promise<BlockChanges[]> {
    const q = changesStatement(after, upTo, maxBlocks);
    return blockChangesOf((await this.query(this.texts.get(q.sql), q.params)).map(historyRowOf));
  }

  async firstChangeHeight(): Promise<bigint> {
    const [row] = await this.query(this.texts.get(FIRST_BLOCK_SQL), []);
    const first = row?.[0] as string | null | undefined;
    return first === null || first === undefined ? 1n : BigInt(first);
  }

  /** The writer's notification as it commits, and a slow poll behind it (./block-watch.ts). */
  watchBlocks(onBlock: () => void): () => void {
    return watchBlocks(this.options.url, onBlock, this.options.log);
  }

  /**
   * Callers that ask while a read is under way share the next one, started
   * as soon as it ends: under load one round trip answers many requests, and
   * each caller still gets a read that began after it asked, so it never
   * misses a block committed before it asked (the answer cache relies on it).
   */
  lastBlock(): Promise<CommittedBlock | undefined> {
    if (this.lastBlockRead === undefined) {
      const read = this.readLastBlock();
      this.lastBlockRead = read;
      const settle = () => {
        this.lastBlockRead = undefined;
        if (this.nextLastBlock) {
          const next = this.nextLastBlock;
          this.nextLastBlock = undefined;
          this.lastBlock().then(next.resolve, next.reject);
        }
      };
      read.then(settle, settle);
      return read;
    }
    if (this.nextLastBlock === undefined) {
      let resolve!: (b: CommittedBlock | undefined) => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<CommittedBlock | undefined>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.nextLastBlock = { promise, resolve, reject };
    }
    return this.nextLastBlock.promise;
  }

  private async readLastBlock(): Promise<CommittedBlock | undefined> {
    const { rows } = await this.pool.query<{ height: string | null; time: bigint | null; chain_id: string; hash: string }>(
      `SELECT l.height, l.time, l.chain_id, l.hash FROM (SELECT 1) AS one ${LAST_BLOCK_JOIN}`,
    ).catch((e: unknown) => {
      throw fromPostgres(e, this.options.url);
    });
    const row = rows[0];
    const block = row && blockStampOf(row.height, row.time);
    return block && { ...block, chainId: row!.chain_id, hash: row!.hash };
  }

  /** One statement, one snapshot: the retention row, the oldest kept block and the database's size. */
  async retentionStatus(): Promise<RetentionStatus> {
    const { rows } = await this.pool.query<{
      setting: string; window_ns: bigint | null; rows_pruned: bigint; prune_ns: bigint; longest_batch_ns: bigint;
      oldest_height: string | null; oldest_time: bigint | null; bytes: bigint;
    }>(`
      SELECT r.setting, r.window_ns, r.rows_pruned, r.prune_ns, r.longest_batch_ns,
        b.height::text AS oldest_height, b.time AS oldest_time, pg_database_size(current_database()) AS bytes
      FROM retention r LEFT JOIN LATERAL (SELECT height, time FROM blocks ORDER BY height LIMIT 1) b ON true
      WHERE r.only_row = 1`).catch((e: unknown) => {
      throw fromPostgres(e, this.options.url);
    });
    const r = rows[0]!;
    return {
      retention: r.setting,
      ...(r.window_ns !== null && { prunedWith: windowText(r.window_ns) }),
      ...(r.oldest_height !== null && { oldestKeptBlock: { height: BigInt(r.oldest_height), time: r.oldest_time! } }),
      rowsPruned: r.rows_pruned,
      pruneSeconds: Number(r.prune_ns) / 1e9,
      longestBatchSeconds: Number(r.longest_batch_ns) / 1e9,
      storeBytes: Number(r.bytes),
    };
  }

  connections(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** The planner's view of the current orders, read once per block. */
  orderStats(): Promise<OrderStats> {
    if (this.stats === undefined) {
      const read = this.readOrderStats();
      const stats = { block: '', value: read.then((r) => r.stats) };
      this.stats = stats;
      read.then((r) => (stats.block = r.block), () => {
        // A failed read is not kept: the next page asks again.
        if (this.stats === stats) this.stats = undefined;
      });
    }
    return this.stats.value;
  }

  /** Drops the counts if they were read at another block than `block`. */
  private sawBlock(block: BlockStamp | undefined): void {
    if (this.stats !== undefined && this.stats.block !== blockToken(block)) this.stats = undefined;
  }

  /**
   * EXPLAIN of the one statement a listOrders call runs: for tests and for
   * anyone asking why a query is slow.
   */
  async explainOrders(filter: OrderFilter, page: PageRequest<OrderKey>): Promise<string[]> {
    const queries = orderQueries(POSTGRES, filter, page, await this.orderStats());
    return queries === undefined ? [] : this.explain(queries);
  }

  async explainBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<string[]> {
    return this.explain(bundleQueries(POSTGRES, filter, page));
  }

  private async readOrderStats(): Promise<{ stats: OrderStats; block: string }> {
    // One statement, so the counts and the block they belong to are one snapshot.
    const { rows } = await this.pool.query({
      text: `SELECT c.dimension, c.value, c.n, l.height, l.time FROM order_counts AS c ${LAST_BLOCK_JOIN} ORDER BY c.dimension, c.value`,
      rowMode: 'array',
    }).catch((e: unknown) => {
      throw fromPostgres(e, this.options.url);
    });
    const counts = rows as [string, number, bigint, string | null, bigint | null][];
    const [, , , height = null, time = null] = counts[0] ?? [];
    return { stats: orderStatsOf(counts), block: blockToken(blockStampOf(height, time)) };
  }

  /** Runs a page's statement; `key` reads a row's listing key from its node and key columns. */
  private async run<K>(page: PageRequest<K>, queries: PageQueries, key: (json: string, k1: bigint, k2: unknown) => K): Promise<Page<K>> {
    const found = await this.stamped(pageStatement(queries));
    const rows = (found.rows as [json: string, k1: bigint, k2: unknown][]).map(([json, k1, k2]) => ({ json, key: key(json, k1, k2) }));
    return stamp(assemblePage(page, rows, found.beyond), found.lastBlock);
  }

  /** Runs a stampedStatement; the planner's counts are dropped if it read another block than theirs. */
  private async stamped(statement: Statement): Promise<ReturnType<typeof unstamp>> {
    const found = unstamp(await this.query(this.texts.get(statement.sql), statement.params));
    this.sawBlock(found.lastBlock);
    return found;
  }

  /**
   * Runs a named statement on a pooled connection; the connection is closed
   * after it if it now holds more prepared statements than its share, or
   * broke (an error not from the server).
   */
  private async query(statement: NamedStatement, values: SqlValue[]): Promise<unknown[][]> {
    const client = await this.pool.connect().catch((e: unknown) => {
      throw fromPostgres(e, this.options.url);
    });
    let close = false;
    try {
      const result = await client.query<unknown[]>({ name: statement.name, text: statement.text, values, rowMode: 'array' });
      return result.rows;
    } catch (e) {
      close = !(e instanceof pg.DatabaseError);
      throw fromPostgres(e, this.options.url);
    } finally {
      close = this.prepared.prepared(client, statement) || close;
      client.release(close);
    }
  }

  /** The statement texts kept built, and their bytes. */
  get statementTextsSize(): { entries: number; bytes: number } {
    return this.texts.size;
  }

  private async explain(queries: PageQueries): Promise<string[]> {
    const statement = pageStatement(queries);
    const text = numberedPlaceholders(expandSql(statement.sql, POSTGRES));
    const { rows } = await this.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, statement.params);
    return rows.map((r) => r['QUERY PLAN']);
  }
}
