/**
 * What clients can make a PostgreSQL store hold or do, bounded: the
 * statements a pooled connection keeps prepared (pg and the server keep
 * each for the connection's life; distinct filters make distinct texts),
 * and the time a query may run, cut off as a QueryTimeoutError that the API
 * answers 504 in the envelope.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { buildApp } from '../../../src/api/app.js';
import { QueryTimeoutError } from '../../../src/errors.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/store.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { createTestDatabase, forEachServer, type TestDatabase } from '../../support/postgres.js';
import { block, hex, order } from '../helpers.js';

const party = (n: number) => hex(900_000 + n);

forEachServer((server) => {
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase(server);
    const writer = await PostgresWriter.open(db.url);
    try {
      await writeBlocks(writer, [block(1, { orders: Array.from({ length: 50 }, (_, i) => order(i + 1, { partyId: party(i % 60) })) })]);
    } finally {
      await writer.close();
    }
  });

  after(() => db?.drop());

  /** Bytes of statement text the pool's one connection holds prepared, as the server counts them. */
  async function preparedOnServer(store: PostgresStore): Promise<number> {
    const pool = (store as unknown as { pool: pg.Pool }).pool;
    const { rows } = await pool.query<{ bytes: string | null }>('SELECT sum(length(statement)) AS bytes FROM pg_prepared_statements');
    return Number(rows[0]!.bytes ?? 0);
  }

  test('a connection holds no more prepared statements than its share, however many filters clients send', async () => {
    const bound = 128 << 10;
    const store = await openPostgresStore({ url: db.url, readOnly: true, poolSize: 1, preparedBytesPerConnection: bound });
    try {
      let most = 0;
      let sent = 0;
      // 64 filters of 1 to 64 parties: a statement each, of one arm per party, ~1.5 MB of text in all.
      for (let n = 1; n <= 64; n++) {
        const page = await store.listOrders({ partyIds: Array.from({ length: n }, (_, i) => party(i)) }, { newestFirst: true, mode: 'first', limit: 5 });
        assert.ok(page.rows.length > 0);
        sent += n * 800;
        most = Math.max(most, await preparedOnServer(store));
      }
      assert.ok(sent > 8 * bound, 'the filters sent were more than the bound');
      // The largest statement is ~50 KB: the bound, plus the statement that went past it.
      assert.ok(most <= bound + (64 << 10), `a connection held ${most} bytes of prepared statements (bound ${bound})`);
      assert.ok(store.statementTextsSize.bytes <= 4 << 20);
    } finally {
      await store.close();
    }
  });

  test('a query past the time limit is cancelled: a QueryTimeoutError, and 504 in the envelope through the API', async () => {
    const store = await openPostgresStore({ url: db.url, readOnly: true, queryTimeoutMs: 500 });
    const locker = await openPostgresStore({ url: db.url, readOnly: true, poolSize: 1 });
    const lockPool = (locker as unknown as { pool: pg.Pool }).pool;
    const lock = await lockPool.connect();
    try {
      // Every page waits for this lock: a query that runs as long as the lock is held.
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE orders_current IN ACCESS EXCLUSIVE MODE');
      // The server cuts it off, at the limit the store set on its sessions; the 30 s only stop a hang.
      const outcome = await Promise.race([
        store.listOrders({}, { newestFirst: true, mode: 'first', limit: 5 }).then(() => 'answered', (e: unknown) => e),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 30 s'), 30_000).unref()),
      ]);
      assert.ok(outcome instanceof QueryTimeoutError, String(outcome));
      const pool = (store as unknown as { pool: pg.Pool }).pool;
      assert.equal((await pool.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]!.statement_timeout, '500ms');

      const app = await buildApp({ store, http: { queryTimeoutMs: 500 } });
      const reply = await app.inject({ url: '/api/v2/orders?pagination.first=3' });
      assert.equal(reply.statusCode, 504, reply.body);
      assert.deepEqual(JSON.parse(reply.body), { code: 4, message: 'the query took longer than this server allows', details: [] });
      assert.equal(reply.headers['x-block-height'], '1');
      await app.close();
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
      await locker.close();
      await store.close();
    }
    const after = await openPostgresStore({ url: db.url, readOnly: true, queryTimeoutMs: 500 });
    assert.equal((await after.listOrders({}, { newestFirst: true, mode: 'first', limit: 5 })).rows.length, 5, 'pages run as ever once the lock is gone');
    await after.close();
  });
});
