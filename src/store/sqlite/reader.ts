/**
 * The embedded store's connection for queries, with the statements it keeps
 * prepared, bounded in memory whatever filters clients send. Distinct
 * filters make distinct statements (an IN list of 1,000 ids, 64 arms of a
 * branch each), and SQLite's compiled form of a statement, in native
 * memory, is what costs: 7 times its text and more, ~200 KB for one of
 * 1,000 ids (BENCHMARKS.md, "Figures behind the code"). Kept statements are
 * bounded by that estimate, least recently used out; and since a statement
 * dropped is only freed when V8's collector finds it (which it has no reason
 * to hurry: it does not see native memory; 3,000 distinct statements took a
 * process from 60 to 470 MB), the connection is closed and opened again once
 * it has prepared twice that bound: closing it finalizes every statement it
 * ever prepared, kept or dropped. A store with the usual few hundred
 * statements never reaches it.
 */
import { closeSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { BoundedMap, stringBytes } from '../../bounded-map.js';
import { expandSql } from '../page-sql.js';
import { fromU64 } from '../rows.js';
import { openShm, readWalIndexHeaders, WAL_INDEX_HEADERS_BYTES } from './wal-index.js';
import type { CommittedBlock } from '../store.js';
import { openDatabase, type OpenDatabaseOptions } from './database.js';
import { SQLITE } from './dialect.js';

/** Estimated native bytes of statements kept prepared: ~450 of the usual page's (36 KB each). */
export const DEFAULT_STATEMENT_CACHE_BYTES = 16 << 20;

/**
 * Native bytes a prepared statement takes, estimated from its text: per
 * character of SQL, and per parameter (each value of an IN list compiles to
 * several steps). Fitted to statements measured (BENCHMARKS.md).
 */
export function estimatedStatementBytes(text: string): number {
  let parameters = 0;
  for (let i = text.indexOf('?'); i >= 0; i = text.indexOf('?', i + 1)) parameters++;
  return 7 * stringBytes(text) + 150 * parameters;
}

export const LAST_BLOCK_SQL = 'SELECT height, time, chain_id, hash FROM last_block WHERE only_row = 1';

/** The last committed block, as both the store and the writer read it. */
export function readLastBlock(statement: Database.Statement): CommittedBlock | undefined {
  const row = statement.get() as { height: unknown; time: bigint; chain_id: string; hash: string } | undefined;
  return row && { height: fromU64(row.height), time: row.time, chainId: row.chain_id, hash: row.hash };
}

export class ReaderConnection {
  private db: Database.Database;
  private statements: BoundedMap<string, Database.Statement>;
  /** Estimated bytes of every statement prepared since the connection opened, kept or dropped. */
  private prepared = 0;
  lastBlockStatement!: Database.Statement;
  countsStatement!: Database.Statement;
  private dataVersionStatement!: Database.Statement;
  private tx!: (fn: () => unknown) => unknown;
  /** Times the connection was opened again to free its statements (for tests and operators). */
  renewals = 0;
  /** The -shm file, opened once the connection uses it (which keeps it from being replaced); null if there is none. */
  private shm: number | null = null;
  /** Its WAL-index headers as read just before `known` was, and as read now. */
  private knownHeaders = Buffer.alloc(WAL_INDEX_HEADERS_BYTES);
  private headers = Buffer.alloc(WAL_INDEX_HEADERS_BYTES);
  /** The last block read after knownHeaders were: still the last while they are unchanged; null when nothing is known. */
  private known: CommittedBlock | undefined | null = null;

  constructor(private readonly options: OpenDatabaseOptions, private readonly cacheBytes = DEFAULT_STATEMENT_CACHE_BYTES) {
    this.db = openDatabase(options);
    this.statements = new BoundedMap(cacheBytes);
    this.prepareFixed();
  }

  private prepareFixed(): void {
    this.lastBlockStatement = this.db.prepare(LAST_BLOCK_SQL);
    this.countsStatement = this.db.prepare('SELECT dimension, value, n FROM order_counts').raw(true);
    // Prepared once: db.pragma() prepares its statement on every call, and the block watch asks 40 times a second.
    this.dataVersionStatement = this.db.prepare('PRAGMA data_version').pluck();
    // A deferred transaction: the queries of a page read the same snapshot.
    this.tx = this.db.transaction((fn: () => unknown) => fn());
    // Preparing read the schema, so the connection holds the -shm file now: a store not in WAL mode has none.
    this.shm = openShm(this.options.path);
  }

  /** Runs `fn` in one read transaction, on a connection renewed first if it has prepared past its bound. */
  read<T>(fn: () => T): T {
    if (this.prepared > 2 * this.cacheBytes) this.renew();
    return this.tx(fn) as T;
  }

  /** The statement of `sql` (as built, before the JSON stand-ins are expanded), prepared once while kept. */
  statement(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (s === undefined) {
      const text = expandSql(sql, SQLITE);
      s = this.db.prepare(text);
      const bytes = estimatedStatementBytes(text);
      this.prepared += bytes;
      this.statements.set(sql, s, bytes);
    }
    return s;
  }

  /**
   * The last committed block. Outside a transaction, read again only when
   * the WAL-index headers changed since the last read: no commit became
   * visible between the headers read before that read and the same headers
   * now, so its block is still the last. One pread instead of a read
   * transaction, once per turn of an HTTP process (BENCHMARKS.md, "The fast
   * path won back (issue 30)", round 4).
   */
  lastBlock(): CommittedBlock | undefined {
    // In a transaction the block is its snapshot's, which may be older than the headers say.
    if (this.db.inTransaction) return readLastBlock(this.lastBlockStatement);
    if (this.shm === null || !readWalIndexHeaders(this.shm, this.headers)) {
      return readLastBlock(this.lastBlockStatement);
    }
    if (this.known !== null && this.headers.equals(this.knownHeaders)) return this.known;
    this.headers.copy(this.knownHeaders);
    this.known = null; // a read that throws leaves nothing to trust
    this.known = readLastBlock(this.lastBlockStatement);
    return this.known;
  }

  /** The file's data_version: it changes whenever another connection commits. */
  dataVersion(): unknown {
    return this.dataVersionStatement.get();
  }

  /** A statement not to keep (EXPLAIN, say). */
  prepareOnce(text: string): Database.Statement {
    this.prepared += estimatedStatementBytes(text);
    return this.db.prepare(text);
  }

  get statementCacheSize(): { entries: number; bytes: number } {
    return this.statements.size;
  }

  close(): void {
    if (this.shm !== null) closeSync(this.shm);
    this.shm = null;
    this.known = null;
    if (this.db.open) this.db.close();
  }

  private renew(): void {
    this.close();
    this.db = openDatabase({ ...this.options });
    this.statements = new BoundedMap(this.cacheBytes);
    this.prepared = 0;
    this.renewals++;
    this.prepareFixed();
  }
}
