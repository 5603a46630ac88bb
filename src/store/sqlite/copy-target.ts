/**
 * An embedded store as a copy's target. The file is built as
 * ledger.db.copy-in-progress in the target folder (../incomplete.ts: its
 * presence is the mark every command refuses), its schema created by the
 * store's own migrations, and renamed to ledger.db once checked: a rename is
 * atomic, so the folder holds a whole store or an incomplete one, never a
 * part served as if whole. While building: a journal in memory and no
 * syncing (a copy cut short is started over, never recovered), large
 * transactions. Rows loaded one by one go in with the indexes dropped, which
 * are built once after the rows (in WAL mode, while a thread of their own
 * reads the rows back for the check); a copy from another embedded store
 * keeps them, and takes the source's entries in order (./copy-attached.ts).
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { CopyMismatchError, InternalError, StoreNotEmptyError } from '../../errors.js';
import type { AsideChecks, CopyStore, CopyTarget, DirectSource, RowBatches } from '../copy/contract.js';
import type { NeutralRow, TableShape } from '../copy/neutral.js';
import { copyInProgressPath } from '../incomplete.js';
import { databasePath } from '../location.js';
import { u64 } from '../rows.js';
import { openDatabase } from './database.js';
import { fromSqlite } from './errors.js';
import { attachSqliteSource } from './copy-attached.js';
import { targetCheckThread } from './copy-check-aside.js';
import { NUMBERED_HERE, quoted, sqliteTableReader } from './copy-tables.js';
import { fillOrderIds, INDEXED_BY_ID_LEVELS, ORDER_NO_OF_ID } from './order-ids.js';

/** The page cache while building: index builds sort in it. */
const BUILD_CACHE_KIB = 512 * 1024;

/** A target folder must hold no store; a copy cut short before is removed, to start over. */
function prepareFolder(dataDir: string): string {
  if (existsSync(databasePath(dataDir))) {
    throw new StoreNotEmptyError(`${dataDir} already holds a store (ledger.db): copy into an empty or new folder`);
  }
  mkdirSync(dataDir, { recursive: true });
  const path = copyInProgressPath(dataDir);
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
  return path;
}

export function openSqliteCopyTarget(dataDir: string): CopyTarget {
  const path = prepareFolder(dataDir);
  // Creating the file is the mark: it is there from before the schema, let alone the first row.
  closeSync(openSync(path, 'wx'));
  const db = openDatabase({ path });
  try {
    return new SqliteCopyTarget(db, path, databasePath(dataDir));
  } catch (e) {
    db.close();
    throw fromSqlite(e, path);
  }
}

class SqliteCopyTarget implements CopyTarget {
  readonly tables: readonly TableShape[];
  readonly reader;
  /** The indexes the migrations made, dropped while rows load one by one and made again after; undefined while kept. */
  private dropped: { name: string; sql: string }[] | undefined;
  /** The thread reading the rows back for the check while the indexes are built. */
  private aside: AsideChecks | undefined;

  constructor(private readonly db: Database.Database, private readonly path: string, private readonly finalPath: string) {
    // Out of WAL (every page written twice, and the WAL as large as the store), to a journal in
    // memory: pages appended to a file are not journaled at all. OFF is refused by the driver's defensive mode.
    db.pragma('journal_mode = DELETE');
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma(`cache_size = -${BUILD_CACHE_KIB}`);
    // Tables load in any order (orders before the parties they name): references are checked once, after.
    db.pragma('foreign_keys = OFF');
    this.reader = sqliteTableReader(db, path);
    this.tables = this.reader.tables;
  }

  /** Another embedded store is read through this connection, and copied table by table inside SQLite (./copy-attached.ts). */
  async directFrom(from: CopyStore): Promise<DirectSource | undefined> {
    return from.kind === 'embedded' ? attachSqliteSource(this.db, from.dataDir, this.path) : undefined;
  }

  /** Once, before the first row loaded one by one: inserting into a table without its indexes, then building each in one sort, is faster. */
  private dropIndexes(): void {
    if (this.dropped !== undefined) return;
    this.dropped = this.db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL").all() as { name: string; sql: string }[];
    for (const i of this.dropped) this.db.exec(`DROP INDEX ${quoted(i.name)}`);
  }

  async load(table: TableShape, batches: RowBatches): Promise<void> {
    const columns = table.columns.map((c) => quoted(c.name));
    const values = columns.map(() => '?');
    // Orders take numbers as they load (the table's own key); a history row
    // takes its order's, which loaded before it, found by its id bound again.
    const number = table.name === 'orders_history' ? NUMBERED_HERE.get(table.name) : undefined;
    const numbered = number !== undefined;
    const idAt = table.columns.findIndex((c) => c.name === 'id_bytes');
    if (numbered) {
      columns.push(number);
      values.push(ORDER_NO_OF_ID);
    }
    const insert = this.db.prepare(`INSERT INTO ${quoted(table.name)} (${columns.join(', ')}) VALUES (${values.join(', ')})`);
    const u64At = table.columns.flatMap((c, i) => (c.kind === 'u64' ? [i] : []));
    const write = this.db.transaction((rows: NeutralRow[]) => {
      for (const row of rows) {
        // A number binds as a REAL, which an ANY column would keep as one: a u64 goes in as an integer.
        for (const i of u64At) {
          const v = row[i];
          if (typeof v === 'number') row[i] = BigInt(v);
          else if (v !== null) row[i] = u64(v as bigint);
        }
        if (numbered) insert.run(row, row[idAt]);
        else insert.run(row);
      }
    });
    try {
      this.dropIndexes();
      // The rows a migration put there (retention's one row) give way to the source's.
      this.db.prepare(`DELETE FROM ${quoted(table.name)}`).run();
      for await (const rows of batches) write(rows);
      // History finds each row's order by its id (above): every loaded order's id into the last id level.
      if (table.name === INDEXED_BY_ID_LEVELS) this.db.transaction(() => fillOrderIds(this.db))();
    } catch (e) {
      throw fromSqlite(e, this.path);
    }
  }

  /**
   * Where indexes are to be built, a thread that reads the rows back
   * meanwhile: the file goes to WAL mode first, so that the thread reads
   * committed pages while the builds write theirs (under the journal in
   * memory, a build's pages could not reach the file while a reader held
   * it). Built once, each index is then one transaction: the WAL is
   * checkpointed after each, not held whole until the last.
   */
  async checkAside(): Promise<AsideChecks | undefined> {
    if (this.dropped === undefined || this.dropped.length === 0) return undefined;
    try {
      this.db.pragma('journal_mode = WAL');
    } catch (e) {
      throw fromSqlite(e, this.path);
    }
    this.aside = targetCheckThread(this.path);
    return this.aside;
  }

  async finishLoad(): Promise<void> {
    try {
      for (const { sql } of this.dropped ?? []) this.db.exec(sql);
      const broken = this.db.pragma('foreign_key_check') as { table: string; parent: string }[];
      if (broken.length > 0) {
        throw new CopyMismatchError(`the copy of table ${broken[0]!.table} names rows of ${broken[0]!.parent} that the copy does not hold: ${this.path} stays incomplete`);
      }
      this.db.pragma('foreign_keys = ON');
    } catch (e) {
      throw fromSqlite(e, this.path);
    }
  }

  /** Back to the store's journal mode, synced, then renamed into place: the mark goes with the rename. */
  async complete(): Promise<void> {
    // Its connection closed first: the last one to close folds the WAL into the file, which the rename then moves.
    await this.aside?.close();
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.close();
      // Pages left in a WAL would not move with the rename: a connection still open kept them there.
      if (existsSync(`${this.path}-wal`)) throw new InternalError(`${this.path}-wal was not folded into the copy: ${this.path} stays incomplete`);
      syncFile(this.path);
      renameSync(this.path, this.finalPath);
      syncFile(dirname(this.finalPath));
    } catch (e) {
      throw fromSqlite(e, this.path);
    }
  }

  async abandon(): Promise<void> {
    await this.aside?.close();
    if (this.db.open) this.db.close();
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
