/**
 * The one place that picks a backend: PostgreSQL when a database URL is
 * given, else the embedded SQLite store in a folder. Each backend's modules
 * are loaded when it is opened: a process (each HTTP worker, say) loads only
 * the driver it uses, and starts the sooner (pg alone takes ~50 ms to load).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Store, WriteStore } from './store.js';

export interface StoreConfig {
  /** Folder of the embedded database; unused when databaseUrl is given. */
  dataDir: string;
  /** A postgres:// URL: the store is that PostgreSQL database. */
  databaseUrl?: string | undefined;
}

export interface OpenOptions {
  /**
   * Open for queries only: never migrate or write. With PostgreSQL the role
   * may have SELECT rights only, and the database may be a read replica; the
   * schema must be at this version already.
   */
  readonly?: boolean;
}

export interface WriterOptions {
  /**
   * With PostgreSQL, one instance writes at a time (an advisory lock elects
   * it). Without `wait`, opening fails while another instance holds the lock;
   * with it, opening waits until the lock is free (a standby), calling
   * onStandby once if it has to wait, until signal aborts.
   */
  wait?: boolean;
  signal?: AbortSignal;
  onStandby?: () => void;
}

export const DEFAULT_DATA_DIR = './data';

/** The backend's name and where its data lives, for logs and status. */
export function describeStore(config: StoreConfig): string {
  if (config.databaseUrl === undefined) return `embedded store in ${config.dataDir}`;
  const u = new URL(config.databaseUrl);
  return `PostgreSQL database ${u.pathname.slice(1) || '(default)'} at ${u.host}`;
}

const databasePath = (dataDir: string) => join(dataDir, 'ledger.db');

/**
 * Opens the configured store for ingestion. The embedded store writes on a
 * thread of its own, beside the thread that reads and decodes the source.
 */
export async function openWriter(config: StoreConfig, options: WriterOptions = {}): Promise<WriteStore> {
  if (config.databaseUrl !== undefined) {
    const { PostgresWriter } = await import('./postgres/writer.js');
    return PostgresWriter.open(config.databaseUrl, options);
  }
  mkdirSync(config.dataDir, { recursive: true });
  const { SqliteWriter } = await import('./sqlite/writer.js');
  return SqliteWriter.open(databasePath(config.dataDir));
}

/** Opens the configured store for queries (and, unless readonly, writes). */
export async function openStore(config: StoreConfig, options: OpenOptions = {}): Promise<Store> {
  const readonly = options.readonly ?? false;
  if (config.databaseUrl !== undefined) {
    const { openPostgresStore } = await import('./postgres/store.js');
    return openPostgresStore({ url: config.databaseUrl, readonly });
  }
  mkdirSync(config.dataDir, { recursive: true });
  const { openSqliteStore } = await import('./sqlite/store.js');
  return openSqliteStore({ path: databasePath(config.dataDir), readonly });
}
