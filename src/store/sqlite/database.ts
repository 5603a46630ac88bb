/**
 * Opens the embedded store's SQLite file, as a reader or as the writer, with
 * the settings each needs; the writer creates or migrates the schema, a
 * reader only checks it. Why each setting has its value, with the figures:
 * BENCHMARKS.md, "Embedded store settings".
 */
import Database from 'better-sqlite3';
import { fromSqlite } from './errors.js';
import { checkSchema, migrate } from './schema.js';

/** The writer keeps the index pages it dirties all over the file in its cache, and reads the rest through a memory map. */
const WRITER_CACHE_KIB = 256 * 1024;
const WRITER_MMAP_BYTES = 2 ** 31;
/** Readers read with plain reads into a small cache, the OS page cache behind it, so that their resident memory stays small. */
const READER_CACHE_KIB = 8 * 1024;
const BUSY_TIMEOUT_MS = 10_000;
/** Bytes of WAL before an automatic checkpoint (SQLite's default is 1000 pages): a page rewritten by many blocks is written back once. */
const WAL_AUTOCHECKPOINT_BYTES = 400 << 20;
/** Bytes per database page of a store created now (SQLite's default is 4096); a store keeps the size it was created with. */
export const PAGE_BYTES = 16_384;

export interface OpenDatabaseOptions {
  /** The database file. Its folder must exist. */
  path: string;
  /**
   * Open for queries only, while another connection (process or thread)
   * writes. The file must exist at the current schema version.
   */
  readOnly?: boolean | undefined;
  /** Hears a long migration's progress (default: lines of standard error). */
  notice?: ((message: string) => void) | undefined;
}

/** Opens the file with the settings of its role; SQLite's refusals come as errors of the catalogue (./errors.ts). */
export function openDatabase(options: OpenDatabaseOptions): Database.Database {
  try {
    return openWith(options);
  } catch (e) {
    throw fromSqlite(e, options.path);
  }
}

function openWith(options: OpenDatabaseOptions): Database.Database {
  const readOnly = options.readOnly ?? false;
  const db = new Database(options.path, { readonly: readOnly, fileMustExist: readOnly });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!readOnly) {
      // Only a database without pages takes a page size; then WAL mode, which fixes it.
      db.pragma(`page_size = ${PAGE_BYTES}`);
      db.pragma('journal_mode = WAL');
      // In WAL mode NORMAL loses at most the last commits on power loss, never consistency.
      db.pragma('synchronous = NORMAL');
      db.pragma(`wal_autocheckpoint = ${Math.round(WAL_AUTOCHECKPOINT_BYTES / Number(db.pragma('page_size', { simple: true })))}`);
    }
    db.pragma(`cache_size = -${readOnly ? READER_CACHE_KIB : WRITER_CACHE_KIB}`);
    db.pragma(`mmap_size = ${readOnly ? 0 : WRITER_MMAP_BYTES}`);
    db.pragma('temp_store = MEMORY');
    // Every integer comes back as a bigint: 64-bit values must never be rounded.
    db.defaultSafeIntegers(true);
    if (readOnly) checkSchema(db);
    else migrate(db, options.notice);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}
