/**
 * The indexes of a migrated PostgreSQL store, as pg_indexes describes them,
 * are those src/store/indexes.ts declares: every planner path has its index,
 * with the declared columns and condition; and the statements createIndexSql
 * writes give indexes PostgreSQL describes the same way.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { createIndexSql } from '../../../src/store/indexes.js';
import { openPostgresStore } from '../../../src/store/postgres/store.js';
import { createTestDatabase, forEachServer } from '../../support/postgres.js';
import { assertIndexesAsDeclared, DECLARED, LISTED_TABLES, type LiveIndex } from '../live-indexes.js';

/** The primary keys, which no listing reads. */
const KEYS: LiveIndex[] = [
  { name: 'orders_current_pkey', table: 'orders_current', columns: ['id_bytes'], unique: true },
  { name: 'signer_added_pkey', table: 'signer_added', columns: ['signature_id'], unique: true },
  { name: 'signer_removed_pkey', table: 'signer_removed', columns: ['signature_id'], unique: true },
  { name: 'orders_history_pkey', table: 'orders_history', columns: ['height', 'seq'], unique: true },
];

interface IndexRow {
  indexname: string;
  tablename: string;
  indexdef: string;
}

/**
 * An index from its definition, as pg_get_indexdef prints it: `CREATE [UNIQUE]
 * INDEX name ON schema.table USING btree (columns) [WHERE (condition)]`, with
 * keywords among the column names quoted and string constants cast.
 */
function parse(row: IndexRow): LiveIndex {
  // `ON ONLY`: the index of a partitioned table (orders_history), each partition having its own.
  const m = /^CREATE (UNIQUE )?INDEX (\S+) ON (?:ONLY )?\S+ USING btree \(([^()]*)\)(?: WHERE \((.*)\))?$/.exec(row.indexdef);
  assert.ok(m, `an index of columns, optionally partial: ${row.indexdef}`);
  const index: LiveIndex = {
    name: m[2]!,
    table: row.tablename,
    columns: m[3]!.split(', ').map((c) => c.replace(/^"(.*)"$/, '$1')),
    unique: m[1] !== undefined,
  };
  if (m[4] !== undefined) index.where = m[4].replace(/::text\b/g, '');
  return index;
}

async function indexRows(client: pg.Client, schema: string): Promise<IndexRow[]> {
  const { rows } = await client.query<IndexRow>(
    'SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2)',
    [schema, [...LISTED_TABLES]],
  );
  return rows;
}

/** A definition without its table's schema (nor the ONLY of a partitioned table's), to compare indexes of two schemas. */
const unqualified = (indexdef: string) => indexdef.replace(/ ON (?:ONLY )?\w+\./, ' ON ');

forEachServer((server) => {
  test('a new store has the declared indexes; createIndexSql writes the same ones', async (t) => {
    const db = await createTestDatabase(server);
    const client = new pg.Client({ connectionString: db.url });
    // The client ends first: dropping the database would end its session from the server's side.
    t.after(async () => {
      await client.end();
      await db.drop();
    });
    await (await openPostgresStore({ url: db.url })).close();
    await client.connect();
    const schema = (await client.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]!.s;
    const live = await indexRows(client, schema);
    assertIndexesAsDeclared(live.map(parse), DECLARED.postgres, KEYS);

    // The statements on empty copies of the tables, in a schema of their own.
    await client.query('CREATE SCHEMA declared');
    for (const table of LISTED_TABLES) await client.query(`CREATE TABLE declared.${table} (LIKE ${schema}.${table})`);
    await client.query('SET search_path = declared');
    for (const index of DECLARED.postgres) await client.query(createIndexSql(index));
    const written = new Map((await indexRows(client, 'declared')).map((r) => [r.indexname, unqualified(r.indexdef)]));
    for (const row of live) {
      if (KEYS.some((k) => k.name === row.indexname)) continue;
      assert.equal(written.get(row.indexname), unqualified(row.indexdef), row.indexname);
    }
    assert.equal(written.size, DECLARED.postgres.length);
  });
});
