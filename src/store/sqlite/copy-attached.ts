/**
 * An embedded store copied into an embedded target without its rows passing
 * through JavaScript: the target's connection attaches the source's file and
 * copies each table with one INSERT ... SELECT, which SQLite does record by
 * record where both tables have the same columns (its transfer optimization):
 * a 1M-order store's 3.8M rows in about 1.5 s, where binding each row took
 * most of a minute (BENCHMARKS.md, "Copying a store").
 *
 * The snapshot: the attached file is read inside one transaction of the
 * target's connection, from its first read (the last block) to close(), which
 * commits what was copied. The copy's check reads the source's rows at that
 * snapshot: on a thread of its own, whose snapshot is proved the same, while
 * the target is read back (./copy-check-aside.ts), or else through the same
 * transaction; either way it hashes exactly what was copied. The target's
 * own columns, numbers included (./order-numbers.ts), come along: both
 * stores number their orders alike, and the numbers name rows of the same file.
 */
import type Database from 'better-sqlite3';
import { SchemaVersionError } from '../../errors.js';
import type { AsideChecks, DirectSource } from '../copy/contract.js';
import type { TablePlan } from '../copy/neutral.js';
import { databasePath } from '../location.js';
import type { CommittedBlock } from '../store.js';
import { checkAside } from './copy-check-aside.js';
import { fromSqlite } from './errors.js';
import { columnsOf, quoted, SOURCE_MMAP_BYTES, sqliteTableReader } from './copy-tables.js';
import { INDEXED_BY_ID_LEVELS, ORDER_ID_TABLES } from './order-ids.js';
import { LAST_BLOCK_SQL, readLastBlock } from './reader.js';
import { SCHEMA_VERSION } from './schema.js';

/** The attached source's name in the target's connection. */
const SOURCE = 'source';

/**
 * Attaches the store in `dataDir` to `db` (the target's connection, outside
 * any transaction) and begins its snapshot, with a thread that reads the
 * same snapshot for the check where that can be proved (./copy-check-aside.ts).
 */
export async function attachSqliteSource(db: Database.Database, dataDir: string, targetPath: string): Promise<DirectSource> {
  const path = databasePath(dataDir);
  try {
    db.prepare(`ATTACH ? AS ${SOURCE}`).run(path);
  } catch (e) {
    throw fromSqlite(e, path);
  }
  let aside: AsideChecks | undefined;
  try {
    db.pragma(`${SOURCE}.mmap_size = ${SOURCE_MMAP_BYTES}`);
    const version = Number(db.pragma(`${SOURCE}.user_version`, { simple: true }));
    if (version !== SCHEMA_VERSION) {
      throw new SchemaVersionError(`${path} is at schema version ${version}, this ledger-query's is ${SCHEMA_VERSION}: open it with ledger-query once to migrate it`);
    }
    const lastBlock = db.prepare(LAST_BLOCK_SQL.replace('FROM last_block', `FROM ${SOURCE}.last_block`));
    let block: CommittedBlock | undefined;
    aside = await checkAside(path, () => {
      db.exec('BEGIN');
      // The snapshot starts with the transaction's first read of the file: its last block, which it then holds.
      block = readLastBlock(lastBlock);
    }, () => db.exec('ROLLBACK'));
    const reader = sqliteTableReader(db, path, SOURCE);
    return {
      ...reader,
      block,
      aside,
      copyTable: async (plan) => {
        try {
          copyTable(db, plan);
        } catch (e) {
          // Writing is the target's (a full disk is the target's).
          throw fromSqlite(e, targetPath);
        }
      },
      // Commits what was copied (the target stays marked incomplete until checked) and lets go of the snapshot.
      close: async () => {
        if (!db.open) return;
        if (db.inTransaction) db.exec('COMMIT');
        db.exec(`DETACH ${SOURCE}`);
      },
    };
  } catch (e) {
    await aside?.close();
    if (db.inTransaction) db.exec('ROLLBACK');
    db.exec(`DETACH ${SOURCE}`);
    throw fromSqlite(e, path);
  }
}

/**
 * Every column of the table from the source's file into the target's, the
 * rows a migration put there first removed; orders_current with its index
 * by id, the id levels (./order-ids.ts), which no plan names.
 */
function copyTable(db: Database.Database, plan: TablePlan): void {
  copyWhole(db, plan.target.name);
  if (plan.target.name === INDEXED_BY_ID_LEVELS) for (const table of ORDER_ID_TABLES) copyWhole(db, table);
}

/**
 * Only `SELECT *` into a table of the same columns, empty, takes SQLite's
 * transfer optimization, which copies the table's records and, where the
 * target keeps them, its indexes' entries, in order, as VACUUM does: the
 * target's indexes are the source's, never sorted again.
 */
function copyWhole(db: Database.Database, table: string): void {
  const name = quoted(table);
  const names = (schema: string) => columnsOf(db, schema, table).map((c) => quoted(c.name));
  const target = names('main');
  const source = names(SOURCE);
  const same = target.length === source.length && target.every((c, i) => c === source[i]);
  db.prepare(`DELETE FROM main.${name}`).run();
  db.prepare(same
    ? `INSERT INTO main.${name} SELECT * FROM ${SOURCE}.${name}`
    : `INSERT INTO main.${name} (${target.join(', ')}) SELECT ${target.join(', ')} FROM ${SOURCE}.${name}`).run();
}
