/**
 * The writer election: one PostgresWriter per database holds the writer lock;
 * another is refused, or with `wait` stands by, asking again every POLL_MS,
 * and takes over at its first ask after the writer's session ends, whether it
 * closed or its connection died. How long that takes is the number of asks,
 * counted here through the lease's pauses, not a time measured.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { POLL_MS, WriterLease } from '../../../src/store/postgres/election.js';
import { LOCKS } from '../../../src/store/postgres/schema.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { SchemaVersionError } from '../../../src/errors.js';
import { writeBlocks } from '../../../src/store/store.js';
import { createTestDatabase, forEachServer, query, type TestDatabase, type TestServer } from '../../support/postgres.js';
import { block, order } from '../helpers.js';

const databases: TestDatabase[] = [];
after(() => Promise.all(databases.map((d) => d.drop())));

async function database(server: TestServer): Promise<string> {
  const db = await createTestDatabase(server);
  databases.push(db);
  return db.url;
}


/** The writer sessions connected to the database, and whether each holds the writer lock. */
async function writerSessions(url: string): Promise<{ pid: number; holds: boolean }[]> {
  return query(url, `
    SELECT a.pid, EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted) AS holds
    FROM pg_stat_activity a WHERE a.datname = current_database() AND a.application_name = 'ledger-query writer'
    ORDER BY a.backend_start`);
}

/** Resolves once `condition` holds, looking every 25 ms; fails naming `what` after `ms` (a wait, not a timing: the machine may be busy). */
async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** `promise`, or a failure after `ms`: only a bound on a hang, far above what the machine may take. */
async function within<T>(promise: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A client of its own on `url`, ended after the test. */
async function session(url: string, t: { after(fn: () => Promise<void>): void }): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.after(() => client.end());
  return client;
}

/** Pauses the test lets end one at a time: each asks for how long it would wait. */
function heldPauses() {
  const asked: number[] = [];
  const waiting: (() => void)[] = [];
  return {
    asked,
    pause: (ms: number) => {
      asked.push(ms);
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    /** Ends the pause the lease is in, once it is in its `n`th. */
    endPause: async (n: number) => {
      await until(() => asked.length >= n, `pause ${n}`);
      waiting.shift()!();
    },
  };
}

forEachServer((server) => {
  test('a second writer is refused while the first holds the lock, and may open once it is closed', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    await assert.rejects(PostgresWriter.open(url, {}), {
      name: 'WriterLockHeldError', message: /another ledger-query instance is writing to this database/,
    });
    // The refused one left no session behind.
    assert.deepEqual((await writerSessions(url)).map((s) => s.holds), [true]);
    await first.close();
    const second = await PostgresWriter.open(url, {});
    await second.close();
  });

  test('a standby asks every POLL_MS while the lock is held, and takes it at its first ask once it is free', async (t) => {
    const url = await database(server);
    const holder = await session(url, t);
    await holder.query('SELECT pg_advisory_lock($1)', [LOCKS.writer]);
    const { asked, pause, endPause } = heldPauses();
    let standbyCalls = 0;
    let acquired = false;
    const acquiring = WriterLease.acquire(await session(url, t), { wait: true, pause, onStandby: () => standbyCalls++ });
    void acquiring.then(() => (acquired = true), () => undefined);
    // Three asks while the lock is held: each refused, each followed by a pause.
    for (let n = 1; n <= 3; n++) await endPause(n);
    await until(() => asked.length === 4, 'the fourth pause');
    assert.equal(acquired, false, 'it waits while the lock is held');
    await holder.query('SELECT pg_advisory_unlock($1)', [LOCKS.writer]);
    await endPause(4);
    const lease = await within(acquiring);
    assert.deepEqual(asked, [POLL_MS, POLL_MS, POLL_MS, POLL_MS], 'at most POLL_MS between the lock coming free and the ask that takes it');
    assert.equal(standbyCalls, 1, 'it said once that it stands by');
    await lease.release();
  });

  test('a standby takes over once the writer\'s connection is terminated, and resumes from its checkpoint', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    await writeBlocks(first, [block(1, { orders: [order(1)] }), block(2, { orders: [order(2)] })]);
    let standbyCalls = 0;
    const opening = PostgresWriter.open(url, { wait: true, pollMs: 50, onStandby: () => standbyCalls++ });
    let opened = false;
    void opening.then(() => (opened = true), () => undefined);
    await until(() => standbyCalls === 1, 'the second writer says it stands by');
    assert.equal(opened, false);
    const [writer] = await writerSessions(url);
    assert.equal(writer?.holds, true);
    // As if its process had died: the server ends the session, and with it the lock.
    await query(url, 'SELECT pg_terminate_backend($1)', [writer!.pid]);
    const second = await within(opening);
    try {
      assert.equal(standbyCalls, 1);
      assert.equal((await second.lastBlock())?.height, 2n);
      await writeBlocks(second, [block(3, { orders: [order(3)] })]);
      // The old writer lost its lease: its writes fail instead of doing nothing.
      await assert.rejects(writeBlocks(first, [block(4, { orders: [order(4)] })]), /session/);
      assert.equal((await second.lastBlock())?.height, 3n);
    } finally {
      await second.close();
      await first.close();
    }
  });

  test('a standby takes over once the writer closes', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    let standby = false;
    const opening = PostgresWriter.open(url, { wait: true, onStandby: () => (standby = true) });
    await until(() => standby, 'the second writer says it stands by');
    await first.close();
    const second = await within(opening);
    assert.deepEqual((await writerSessions(url)).map((s) => s.holds), [true], 'it holds the lock, alone');
    await second.close();
  });

  test('a writer that finds the lock free is no standby', async () => {
    const url = await database(server);
    let standby = false;
    const writer = await PostgresWriter.open(url, { wait: true, onStandby: () => (standby = true) });
    assert.equal(standby, false);
    await writer.close();
  });

  test('aborting a standby stops its wait with an AbortError and ends its session', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    try {
      const abort = new AbortController();
      let standby = false;
      const opening = PostgresWriter.open(url, { wait: true, signal: abort.signal, onStandby: () => (standby = true) });
      await until(() => standby, 'the second writer says it stands by');
      abort.abort();
      await assert.rejects(within(opening), { name: 'AbortError' });
      // Only the writer's session is left, once the server has seen the other go.
      let sessions = await writerSessions(url);
      for (const deadline = Date.now() + 30_000; sessions.length > 1 && Date.now() < deadline; sessions = await writerSessions(url)) {
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.deepEqual(sessions.map((s) => s.holds), [true]);
      // Aborted before it starts, it does not even connect.
      await assert.rejects(PostgresWriter.open(url, { wait: true, signal: AbortSignal.abort() }), { name: 'AbortError' });
    } finally {
      await first.close();
    }
  });

  test('a standby that waited through an upgrade refuses the newer schema instead of writing to it', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    let standby = false;
    const opening = PostgresWriter.open(url, { wait: true, onStandby: () => (standby = true) });
    const refused = assert.rejects(opening, (e) => e instanceof SchemaVersionError && /newer than this ledger-query knows/.test(e.message));
    await until(() => standby, 'the second writer says it stands by');
    await query(url, `INSERT INTO schema_migrations (version, description) VALUES (999, 'from the future')`);
    await first.close();
    await within(refused);
    // It let the lock go: a writer of the future could take it.
    assert.deepEqual(await writerSessions(url), []);
  });
});
