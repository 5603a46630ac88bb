/**
 * The writer's vacuum (src/store/postgres/vacuum.ts) against a real server:
 * dead rows that came while a vacuum ran start the next as it ends, and the
 * writer waits for a vacuum far behind, a second at most and once. Another
 * session holds the lock every vacuum of orders_current takes, so that the
 * writer's vacuum runs exactly as long as the test says.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { WriterVacuum } from '../../../src/store/postgres/vacuum.js';
import { eventually } from '../../support/cli.js';
import { createTestDatabase, forEachServer, query } from '../../support/postgres.js';
import { storeWithoutAutovacuum, vacuumsOfOrdersCurrent } from './writer-vacuums.js';

forEachServer((server) => {
  test(`${server.label}: a vacuum far behind holds the writer a second at most, and the rows due meanwhile start the next at once`, async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    await storeWithoutAutovacuum(db.url);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    // Dropping the database ends every session still on it.
    holder.on('error', () => {});
    t.after(() => holder.end());
    await holder.query('BEGIN; LOCK TABLE orders_current IN SHARE UPDATE EXCLUSIVE MODE');
    const writerSession = new pg.Client({ connectionString: db.url });
    await writerSession.connect();
    writerSession.on('error', () => {});
    t.after(() => writerSession.end());
    const vacuum = new WriterVacuum(db.url);
    try {
      // An empty table: 1,000 dead rows make a vacuum due.
      vacuum.dead(1000);
      const waiting = () => query<{ n: number }>(db.url,
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'vacuum%'`);
      await eventually('the vacuum to wait for the lock', async () => (await waiting())[0]!.n === 1, 10_000);

      const timed = async () => {
        const start = performance.now();
        await vacuum.keepUp();
        return performance.now() - start;
      };
      assert.ok(await timed() < 500, 'nothing owed: the writer goes on');
      vacuum.dead(1999);
      assert.ok(await timed() < 500, 'less than twice the due count owed: the writer goes on');
      vacuum.dead(1);
      const waited = await timed();
      assert.ok(waited >= 900 && waited < 5000, `twice the due count owed, the vacuum held: the writer waited ${waited} ms`);
      vacuum.dead(1000);
      assert.ok(await timed() < 500, 'the same vacuum, still held: the writer is not held again');

      await holder.query('COMMIT');
      // The first ends; the 3,000 rows owed start a second with no count after them.
      await eventually('a second vacuum of orders_current', async () => (await vacuumsOfOrdersCurrent(db.url)) === 2, 20_000);
      await sleep(500);
      assert.equal(await vacuumsOfOrdersCurrent(db.url), 2, 'nothing owed after the second: no third');
    } finally {
      await vacuum.close(writerSession);
    }
  });
});
