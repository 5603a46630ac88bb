/**
 * Read-only API instances (`serve --no-ingest`): they never migrate or write,
 * so a PostgreSQL role allowed only SELECT (the grants the README documents)
 * is enough, and they say so in the ingest status ("reader").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { eventually, ingestStatus, runCli, startServe, type RunningServer } from '../support/cli.js';
import { compareServers } from '../support/compare-stores.js';
import { createTestDatabase, forEachServer, type TestDatabase } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-roles-'));
const file = join(dir, 'net.events');
const BLOCKS = 100;
const servers: RunningServer[] = [];

/** One HTTP process: what a role may do is the same from any number, and each more cost a second of CPU on CI's two cores. */
async function serve(args: string[]): Promise<RunningServer> {
  const s = await startServe(['--workers', '1', ...args]);
  servers.push(s);
  return s;
}

async function asSuperuser<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

before(() => {
  const sim = runCli(['simulate', '--out', file, '--blocks', String(BLOCKS), '--seed', '5', '--orders-per-block', '20']);
  assert.equal(sim.status, 0, sim.stderr);
});

after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

forEachServer((server) => {
  const databases: TestDatabase[] = [];
  /** Roles are per server, not per database: dropped after the databases they were granted on. */
  const roles: string[] = [];
  let written: TestDatabase;

  async function database(): Promise<TestDatabase> {
    const db = await createTestDatabase(server);
    databases.push(db);
    return db;
  }

  before(async () => {
    written = await database();
    const ingested = runCli(['ingest', file, '--database-url', written.url]);
    assert.equal(ingested.status, 0, ingested.stderr);
  });

  after(async () => {
    await Promise.all(databases.map((d) => d.drop()));
    await asSuperuser(server.url, async (c) => {
      for (const role of roles) await c.query(`DROP ROLE IF EXISTS ${role}`);
    });
  });

  test('serve --no-ingest on a database a writer created: answers queries as a migrating instance does; status role "reader"', async () => {
    const reader = await serve(['--no-ingest', '--database-url', written.url]);
    const plain = await serve(['--database-url', written.url]);
    const status = await ingestStatus(reader);
    assert.equal(status.role, 'reader');
    assert.equal(status.lastBlock?.height, String(BLOCKS));
    assert.equal(status.state, undefined, 'a reader has no ingestion state');
    assert.equal((await ingestStatus(plain)).role, 'reader');
    assert.ok((await compareServers(reader, plain)) > 0);
  });

  test('serve --no-ingest works with a role that may only SELECT; a writer cannot use that role', async () => {
    const role = `lq_reader_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(8).toString('hex');
    roles.push(role);
    const database = new URL(written.url).pathname.slice(1);
    // The grants the README's deployment section gives, word for word but the names.
    await asSuperuser(written.url, async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await c.query(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
      await c.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await c.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
      // What the README adds for PostgreSQL 14 and older, where every role may create tables in public (a no-op from 15 on).
      await c.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    });
    const url = new URL(written.url);
    url.username = role;
    url.password = password;

    // The role really is read-only: what writes is refused.
    const ingest = runCli(['ingest', file, '--database-url', url.toString()], undefined, 30_000);
    assert.notEqual(ingest.status, 0, ingest.stdout);
    assert.match(ingest.stderr, /permission denied/);
    // Nor may serve without --no-ingest (it would migrate); it says what to do, on one line.
    const migrating = runCli(['serve', '--database-url', url.toString(), '--port', '0'], undefined, 30_000);
    assert.equal(migrating.status, 1, migrating.stdout + migrating.stderr);
    assert.match(migrating.stderr, /^ledger-query serve: PostgreSQL: permission denied .*serve --no-ingest\)\n$/);

    const reader = await serve(['--no-ingest', '--database-url', url.toString()]);
    const owner = await serve(['--no-ingest', '--database-url', written.url]);
    assert.equal((await ingestStatus(reader)).role, 'reader');
    assert.ok((await compareServers(reader, owner)) > 0);
  });

  test('serve --no-ingest on an empty database fails with the schema message and creates nothing', async () => {
    const empty = await database();
    const r = runCli(['serve', '--no-ingest', '--database-url', empty.url, '--port', '0'], undefined, 30_000);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /^ledger-query serve: no ledger-query schema in this database: start an instance that may write/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    const tables = await asSuperuser(empty.url, async (c) =>
      (await c.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`)).rows[0] as { n: number });
    assert.equal(tables.n, 0);
  });

  test('serve --no-ingest refuses --source (usage error)', () => {
    const r = runCli(['serve', '--no-ingest', '--source', `file://${file}`, '--database-url', written.url, '--port', '0'], undefined, 30_000);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /--no-ingest serves queries only: give it no --source/);
  });
});

test('embedded store: serve --no-ingest reads a store ingest wrote, serve --source is the writer, --no-ingest refuses a folder without a store', async () => {
  const store = join(dir, 'embedded');
  const ingested = runCli(['ingest', file, '--data-dir', store]);
  assert.equal(ingested.status, 0, ingested.stderr);
  const reader = await serve(['--no-ingest', '--data-dir', store]);
  const status = await ingestStatus(reader);
  assert.equal(status.role, 'reader');
  assert.equal(status.lastBlock?.height, String(BLOCKS));

  // With the embedded store an instance with a source is always the writer.
  const live = await serve(['--source', `file://${file}`, '--data-dir', join(dir, 'embedded-live')]);
  // A wait for the end, not a timing: a loaded 2-core machine may take long, and a failure says what it saw.
  let seen: unknown;
  await eventually('the embedded instance to write', async () => {
    const s = await ingestStatus(live);
    seen = s;
    assert.notEqual(s.state, 'failed', JSON.stringify(s));
    return s.role === 'writer' && s.state === 'finished';
  }, 90_000).catch((e: unknown) => {
    throw new Error(`${String(e)}; last status ${JSON.stringify(seen)}`);
  });
  assert.equal((await ingestStatus(live)).lastBlock?.height, String(BLOCKS));

  const none = join(dir, 'nothing-here');
  mkdirSync(none);
  const r = runCli(['serve', '--no-ingest', '--data-dir', none, '--port', '0'], undefined, 30_000);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /^ledger-query serve: no ledger-query store in .*nothing-here: ingest into it/);
  assert.deepEqual(readdirSync(none), [], 'nothing created');
});
