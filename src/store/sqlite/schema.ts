/**
 * The SQLite schema's version and its migration. The database records the
 * version it is at (PRAGMA user_version); opening it read-write applies
 * whatever migration of ./migrations.ts is newer, each in its own
 * transaction together with the version bump.
 */
import type Database from 'better-sqlite3';
import { SchemaVersionError } from '../../errors.js';
import { sayOnStderr } from '../notice.js';
import { MIGRATIONS } from './migrations.js';

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function schemaVersion(db: Database.Database): number {
  return Number(db.pragma('user_version', { simple: true }));
}

/** Applies every migration newer than the database; `notice` hears a long one's progress. Returns the versions before and after. */
export function migrate(db: Database.Database, notice: (message: string) => void = sayOnStderr): { from: number; to: number } {
  const from = schemaVersion(db);
  if (from > SCHEMA_VERSION) {
    throw new SchemaVersionError(
      `database schema version ${from} is newer than this ledger-query knows (${SCHEMA_VERSION}); upgrade ledger-query`,
    );
  }
  // A new store's tables are empty: nothing to report.
  const say = from === 0 ? () => {} : notice;
  for (const m of MIGRATIONS) {
    if (m.version <= from) continue;
    db.transaction(() => {
      // Another connection may have migrated while this one waited for the write lock.
      if (schemaVersion(db) >= m.version) return;
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db, say);
      // PRAGMA takes no bound parameters; the version is a number from our own list.
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
  return { from, to: SCHEMA_VERSION };
}

/** For read-only connections, which cannot migrate: the file must be at exactly our version. */
export function checkSchema(db: Database.Database): void {
  const v = schemaVersion(db);
  if (v === SCHEMA_VERSION) return;
  throw new SchemaVersionError(
    v < SCHEMA_VERSION
      ? `database schema version ${v} is older than ${SCHEMA_VERSION}; open it once read-write (ingest or serve) to migrate it`
      : `database schema version ${v} is newer than this ledger-query knows (${SCHEMA_VERSION}); upgrade ledger-query`,
  );
}
