/**
 * The one place that picks a backend: PostgreSQL when a database URL is
 * given, else the embedded SQLite store in a folder. Each backend's modules
 * are loaded when it is opened: a process (each HTTP process, say) loads only
 * the driver it uses, and starts the sooner (pg alone takes ~50 ms to load).
 */
import { mkdirSync } from 'node:fs';
import { refuseIncompleteEmbedded } from './incomplete.js';
import { databasePath } from './location.js';
import type { OpenOptions, QueryStore, StoreConfig, WriterOptions, WriteStore } from './store.js';

/**
 * Opens the configured store for ingestion: the one door for writes. It
 * writes on a thread of its own, beside the thread that reads and decodes
 * the source.
 */
export async function openWriter(config: StoreConfig, options: WriterOptions = {}): Promise<WriteStore> {
  if (config.databaseUrl !== undefined) {
    const { PostgresWriter } = await import('./postgres/writer.js');
    return PostgresWriter.open(config.databaseUrl, options);
  }
  refuseIncompleteEmbedded(config.dataDir);
  mkdirSync(config.dataDir, { recursive: true });
  const { SqliteWriter } = await import('./sqlite/writer.js');
  return SqliteWriter.open(databasePath(config.dataDir), options);
}

/** Opens the configured store for queries; unless readOnly, it creates or migrates the schema first. */
export async function openStore(config: StoreConfig, options: OpenOptions = {}): Promise<QueryStore> {
  const readOnly = options.readOnly ?? false;
  if (config.databaseUrl !== undefined) {
    const { openPostgresStore } = await import('./postgres/store.js');
    return openPostgresStore({ url: config.databaseUrl, readOnly, queryTimeoutMs: options.queryTimeoutMs, log: options.log });
  }
  refuseIncompleteEmbedded(config.dataDir);
  if (!readOnly) mkdirSync(config.dataDir, { recursive: true });
  const { openSqliteStore } = await import('./sqlite/store.js');
  return openSqliteStore({ path: databasePath(config.dataDir), readOnly });
}
