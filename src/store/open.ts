import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore } from './sqlite/store.js';
import { SqliteWriter } from './sqlite/writer.js';
import type { Store, WriteStore } from './store.js';

export interface StoreConfig {
  /** Folder of the embedded database. */
  dataDir: string;
  /** Open for queries only (another process or thread writes). */
  readonly?: boolean;
}

export const DEFAULT_DATA_DIR = './data';

/**
 * Opens the configured store for ingestion: its writes run on a thread of
 * their own, beside the thread that reads and decodes the source.
 */
export async function openWriter(config: Omit<StoreConfig, 'readonly'>): Promise<WriteStore> {
  mkdirSync(config.dataDir, { recursive: true });
  return SqliteWriter.open(databasePath(config.dataDir));
}

const databasePath = (dataDir: string) => join(dataDir, 'ledger.db');

/** Opens the configured store; the one place that picks a backend. */
export function openStore(config: StoreConfig): Store {
  mkdirSync(config.dataDir, { recursive: true });
  return openSqliteStore({ path: databasePath(config.dataDir), readonly: config.readonly ?? false });
}
