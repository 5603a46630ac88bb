/**
 * The backends a parameterised suite runs against: the embedded store and
 * PostgreSQL on each test server (./postgres.ts). A suite loops over BACKENDS
 * and asks each for fresh, empty stores.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { databasePath } from '../../src/store/location.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import type { StoreConfig } from '../../src/store/store.js';
import { createTestDatabase, query, testServers, type TestServer } from './postgres.js';

export interface FreshStore {
  /** The command-line options that name it (for `ledger-query ingest` and `serve`). */
  args: string[];
  config: StoreConfig;
  /**
   * The rows of a query (SQL both backends read alike) on the store's
   * database, as its driver gives them: SQLite's integers as bigints, every
   * digit kept (block times do not fit a double).
   */
  select(sql: string): Promise<Record<string, unknown>[]>;
  remove(): Promise<void>;
}

export interface Backend {
  /** `embedded`, or `postgres ` and the server's id. */
  name: string;
  /** A new empty store; `dir` is a scratch folder of the test's own. */
  fresh(dir: string, label: string): Promise<FreshStore>;
}

export const EMBEDDED: Backend = {
  name: 'embedded',
  async fresh(dir, label) {
    const dataDir = join(dir, `store-${label}`);
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    return {
      args: ['--data-dir', dataDir],
      config: { dataDir },
      select: async (sql) => {
        const db = new Database(join(dataDir, 'ledger.db'), { readonly: true });
        try {
          return db.prepare(sql).safeIntegers(true).all() as Record<string, unknown>[];
        } finally {
          db.close();
        }
      },
      remove: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  },
};

/**
 * The embedded store with id levels of 1, 2, 4, 8 and 16 ids
 * (src/store/sqlite/order-ids.ts): the real recording's few dozen orders
 * drain down through them, where the store's own sizes would keep every id
 * in the first.
 */
export const EMBEDDED_SMALL_ID_LEVELS: Backend = {
  name: 'embedded-small-id-levels',
  async fresh(dir, label) {
    const store = await EMBEDDED.fresh(dir, `${label}-small-id-levels`);
    const db = openDatabase({ path: databasePath(store.config.dataDir) });
    db.exec('UPDATE order_id_levels SET capacity = 1 << level WHERE capacity IS NOT NULL');
    db.close();
    return store;
  },
};

/** A PostgreSQL backend on one test server. */
export const postgresOn = (server: TestServer): Backend => ({
  name: `postgres ${server.id}`,
  async fresh(dir) {
    const db = await createTestDatabase(server);
    return {
      args: ['--database-url', db.url],
      config: { dataDir: dir, databaseUrl: db.url },
      select: (sql) => query(db.url, sql),
      remove: () => db.drop(),
    };
  },
});

/** The embedded store, then PostgreSQL on each test server. */
export const BACKENDS: readonly Backend[] = [EMBEDDED, ...testServers().map(postgresOn)];
