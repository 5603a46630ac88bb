/**
 * Instances started at the same moment on one fresh PostgreSQL database:
 * each tries to migrate, the advisory lock lets one do it, and the others
 * then find the schema current. Without the lock they would race on CREATE
 * TABLE (duplicate type or relation errors) and some would not start.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/open.js';
import { MIGRATIONS } from '../../src/store/postgres/schema.js';
import { startServe, type RunningServer } from '../support/cli.js';
import { createTestDatabase, forEachServer, type TestDatabase, type TestServer } from '../support/postgres.js';

const INSTANCES = 4;
const servers: RunningServer[] = [];
const databases: TestDatabase[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(databases.map((d) => d.drop()));
});

async function database(server: TestServer): Promise<TestDatabase> {
  const db = await createTestDatabase(server);
  databases.push(db);
  return db;
}

/** Each migration must be recorded once, and all of them. */
async function assertMigratedOnce(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: number; n: number }>(
      'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version',
    );
    assert.deepEqual(rows, MIGRATIONS.map((m) => ({ version: m.version, n: 1 })));
  } finally {
    await client.end();
  }
}

forEachServer((server) => {
  test(`${INSTANCES} serve processes started at once on a fresh database: one migrates, all serve`, async () => {
    const db = await database(server);
    const started = await Promise.allSettled(
      Array.from({ length: INSTANCES }, () => startServe(['--database-url', db.url])),
    );
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    const failed = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
    assert.deepEqual(failed, [], 'every instance starts');

    await assertMigratedOnce(db.url);
    for (const s of servers) {
      const res = await fetch(`${s.url}/api/v2/orders?pagination.first=1`);
      assert.equal(res.status, 200, await res.text());
      assert.equal(res.headers.get('x-block-height'), '0');
      const status = await fetch(`${s.url}/api/v2/ingest/status`);
      assert.deepEqual(await status.json(), { role: 'reader' });
    }
  });

  test(`${INSTANCES} stores opened at once in one process migrate once`, async () => {
    const db = await database(server);
    const opened = await Promise.allSettled(
      Array.from({ length: INSTANCES }, () => openStore({ dataDir: '', databaseUrl: db.url })),
    );
    await Promise.all(opened.map((o) => (o.status === 'fulfilled' ? o.value.close() : undefined)));
    assert.deepEqual(opened.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : [])), []);
    await assertMigratedOnce(db.url);
  });
});
