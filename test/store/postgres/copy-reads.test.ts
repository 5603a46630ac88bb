/**
 * EXPLAIN of the statements a copy reads a PostgreSQL store's tables with
 * (source and check alike): kept history in key order comes along the
 * partitions' and the resting rows' primary keys, never through a sort,
 * which would take a core and temporary files before the first row, beside
 * the pages the store serves meanwhile.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { KEPT_HISTORY } from '../../../src/store/copy/neutral.js';
import { postgresReadQueries, tableShapes } from '../../../src/store/postgres/copy-tables.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { createTestDatabase, forEachServer, type TestDatabase } from '../../support/postgres.js';
import { skewedBook } from '../plan-shapes.js';

forEachServer((server) => {
  let db: TestDatabase;
  let client: pg.Client;

  before(async () => {
    db = await createTestDatabase(server);
    const writer = await PostgresWriter.open(db.url);
    for (const b of skewedBook(200)) await writeBlocks(writer, [b]);
    await writer.close();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('ANALYZE');
  });

  after(async () => {
    await client?.end();
    await db?.drop();
  });

  test('postgres copy reads kept history in key order along primary keys, with no sort', async () => {
    const history = (await tableShapes(client)).find((t) => t.name === KEPT_HISTORY)!;
    assert.deepEqual(history.key, ['height', 'seq']);
    const queries = postgresReadQueries(history, history.key);
    assert.equal(queries.length, 2, 'the resting rows, then the partitions');
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    try {
      // As the copy reads them.
      await client.query('SET LOCAL enable_sort = off');
      for (const q of queries) {
        const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.doesNotMatch(plan, /Sort/, `${q}\n${plan}`);
        assert.match(plan, /Index Scan using orders_history_\w*pkey/, `${q}\n${plan}`);
      }
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
