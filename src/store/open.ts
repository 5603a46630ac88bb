import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './store.js';

export interface StoreConfig {
  /** Folder of the embedded database. */
  dataDir: string;
  /** Open for queries only (another process or thread writes). */
  readonly?: boolean;
}

export const DEFAULT_DATA_DIR = './data';

/** Opens the configured store; the one place that picks a backend. */
export function openStore(config: StoreConfig): Store {
  mkdirSync(config.dataDir, { recursive: true });
  return openSqliteStore({ path: join(config.dataDir, 'ledger.db'), readonly: config.readonly ?? false });
}
