/**
 * PostgreSQL as users install it: the distribution's server is built with
 * LLVM and compiles any statement whose estimated cost passes
 * jit_above_cost, which cost ~300 ms a page (an artificial cost from a
 * disabled plan node was enough). No statement of ours may be compiled, on
 * every server of the run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/store.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { createTestDatabase, forEachServer, query, type TestDatabase } from '../../support/postgres.js';
import { BUNDLE_CURSOR, BUNDLE_SHAPES, cursorKey, ORDER_SHAPES, requests, skewedBook } from '../plan-shapes.js';

/** 10,000 orders and 100 bundles. */
const BOOK = skewedBook(100);
/** Every page request of every filter shape, as the plan tests ask them. */
async function everyPage(store: PostgresStore): Promise<number> {
  let n = 0;
  for (const [, filter] of ORDER_SHAPES) for (const req of requests(cursorKey)) n += (await store.listOrders(filter, req), 1);
  for (const [, filter] of BUNDLE_SHAPES) for (const req of requests(BUNDLE_CURSOR)) n += (await store.listBundles(filter, req), 1);
  await store.lastBlock();
  return n;
}

forEachServer((server) => {
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase(server);
    const writer = await PostgresWriter.open(db.url);
    try {
      for (let i = 0; i < BOOK.length; i += 10) await writeBlocks(writer, BOOK.slice(i, i + 10));
    } finally {
      await writer.close();
    }
    await query(db.url, 'ANALYZE');
  });

  after(() => db?.drop());

  test('every session of the store runs with jit=off, even on a database that compiles every statement', async () => {
    // The compile, not the page, made first pages slow (~300 ms a page): shown by the sessions' setting, on every
    // server of the run, where the next test counts compiled statements on the servers that can compile.
    const database = new URL(db.url).pathname.slice(1);
    await query(db.url, `ALTER DATABASE ${database} SET jit = on`);
    await query(db.url, `ALTER DATABASE ${database} SET jit_above_cost = 0`);
    const store = await openPostgresStore({ url: db.url, readOnly: true, poolSize: 3 });
    try {
      await everyPage(store);
      const pool = (store as unknown as { pool: pg.Pool }).pool;
      const sessions = await Promise.all([0, 1, 2].map(() => pool.connect()));
      try {
        for (const c of sessions) assert.equal((await c.query<{ jit: string }>('SHOW jit')).rows[0]!.jit, 'off');
      } finally {
        for (const c of sessions) c.release();
      }
      // The control: a session of the test's own gets the database's setting.
      assert.equal((await query<{ jit: string }>(db.url, 'SHOW jit'))[0]!.jit, 'on');
    } finally {
      await store.close();
      await query(db.url, `ALTER DATABASE ${database} RESET jit`);
      await query(db.url, `ALTER DATABASE ${database} RESET jit_above_cost`);
    }
  });

  test('no page or write statement is JIT-compiled, even where the server would compile every statement', async (t) => {
    const [{ num }] = await query<{ num: number }>(db.url, `SELECT current_setting('server_version_num')::int AS num`) as [{ num: number }];
    if (!server.jitAvailable) return t.skip(`${server.label} cannot JIT-compile (built without LLVM)`);
    if (num < 150000) return t.skip('pg_stat_statements counts JIT-compiled functions from PostgreSQL 15 on');
    const database = new URL(db.url).pathname.slice(1);
    // Every statement of a session that leaves JIT on is now compiled, and counted by pg_stat_statements.
    await withoutJit(db.url, async (c) => {
      for (const cost of ['jit_above_cost', 'jit_inline_above_cost', 'jit_optimize_above_cost']) {
        await c.query(`ALTER DATABASE ${database} SET ${cost} = 0`);
      }
      await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      // This database's statements only: another file's test may be reading its own database's.
      await c.query('SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)');
    });

    // New sessions, which get the database's settings: a writer's groups, then every page.
    const writer = await PostgresWriter.open(db.url);
    const store = await openPostgresStore({ url: db.url, readOnly: true });
    let pages: number;
    try {
      const last = BOOK.length;
      const more = skewedBook(last + 5).slice(last);
      for (const b of more) await writeBlocks(writer, [b]);
      pages = await everyPage(store);
    } finally {
      await writer.close();
      await store.close();
    }
    // The control: a plain session's statement is compiled, so the count below can see one.
    await query(db.url, 'SELECT /* jit control */ count(*) FROM orders_current WHERE status > 0');

    const statements = await readStatements(db.url);
    const compiled = statements.filter((s) => s.jit_functions > 0);
    assert.ok(compiled.some((s) => s.query.includes('jit control')), 'the control statement was compiled');
    assert.deepEqual(compiled.filter((s) => !s.query.includes('jit control')).map((s) => s.query.slice(0, 200)), [], 'statements of ours compiled');
    // What was looked at: the pages, and the writer's statements.
    const calls = (pattern: RegExp) => statements.filter((s) => pattern.test(s.query)).reduce((n, s) => n + Number(s.calls), 0);
    assert.ok(calls(/FROM orders_current AS o/) >= pages - BUNDLE_SHAPES.length * 8, `page statements counted: ${calls(/FROM orders_current AS o/)}`);
    assert.ok(calls(/FROM signer_added AS b/) >= BUNDLE_SHAPES.length * 8, 'bundle page statements counted');
    assert.ok(calls(/^COPY /) > 0 && calls(/INSERT INTO last_block/) >= 5, 'write statements counted');
  });
});

/** Runs `fn` on a session of the test's own that compiles nothing, so that its statements are not counted as ours. */
async function withoutJit<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, options: '-c jit=off' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** What pg_stat_statements holds for the database. */
async function readStatements(url: string): Promise<{ query: string; calls: string; jit_functions: number }[]> {
  return withoutJit(url, async (c) => (await c.query<{ query: string; calls: string; jit_functions: number }>(
    `SELECT query, calls::text, jit_functions::int FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  )).rows);
}
