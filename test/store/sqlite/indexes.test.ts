/**
 * The indexes of a migrated embedded store, as sqlite_master and
 * pragma_index_info describe them, are those src/store/indexes.ts declares:
 * every planner path has its index (a page names it in INDEXED BY), with the
 * declared columns and condition, and createIndexSql writes the statement
 * each was created with.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { createIndexSql } from '../../../src/store/indexes.js';
import { openSqliteStore } from '../../../src/store/sqlite/store.js';
import { tempDatabase } from '../helpers.js';
import { assertIndexesAsDeclared, DECLARED, LISTED_TABLES, type LiveIndex } from '../live-indexes.js';

/**
 * Indexes no listing reads: none. Orders are found by id through the id
 * levels, tables of their own (src/store/sqlite/order-ids.ts); the key of
 * signer_added has no statement.
 */
const KEYS: LiveIndex[] = [];

/** Each index of the listed tables with its statement; SQLite keeps the statement as it was written. */
function liveIndexes(path: string): { index: LiveIndex; sql: string }[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare(
      `SELECT name, tbl_name AS tbl, sql FROM sqlite_master
       WHERE type = 'index' AND tbl_name IN (${LISTED_TABLES.map(() => '?').join(', ')}) AND sql IS NOT NULL`,
    ).all(...LISTED_TABLES) as { name: string; tbl: string; sql: string }[];
    const columns = db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').pluck();
    return rows.map(({ name, tbl, sql }) => {
      const index: LiveIndex = { name, table: tbl, columns: columns.all(name) as string[], unique: /^CREATE UNIQUE /i.test(sql) };
      const where = /\sWHERE\s+([\s\S]*?)\s*$/i.exec(sql)?.[1];
      if (where !== undefined) index.where = where;
      return { index, sql };
    });
  } finally {
    db.close();
  }
}

function assertAsDeclared(path: string): void {
  const live = liveIndexes(path);
  assertIndexesAsDeclared(live.map((l) => l.index), DECLARED.embedded, KEYS);
  for (const declared of DECLARED.embedded) {
    assert.equal(live.find((l) => l.index.name === declared.name)?.sql, createIndexSql(declared), declared.name);
  }
}

test('a new store has the declared indexes, each as createIndexSql writes it', (t) => {
  const { path } = tempDatabase(t);
  openSqliteStore({ path }).closeSync();
  assertAsDeclared(path);
});

test('a store of schema 3, once migrated, has the declared indexes too', (t) => {
  const { path } = tempDatabase(t);
  const fixture = fileURLToPath(new URL('../../../../test/fixtures/store-v3/ledger.db.gz', import.meta.url));
  writeFileSync(path, gunzipSync(readFileSync(fixture)));
  openSqliteStore({ path }).closeSync();
  assertAsDeclared(path);
});
