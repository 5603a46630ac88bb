/**
 * The writer election: one PostgresWriter per database holds the writer lock;
 * another is refused, or with `wait` stands by and takes over within 5 s of
 * the writer's session ending, whether it closed or its connection died.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
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

/** Resolves with how long `promise` took, or fails after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return { value: await Promise.race([promise, timeout]), ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
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

  test('a standby takes over within 5 s of the writer\'s connection being terminated, and resumes from its checkpoint', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    await writeBlocks(first, [block(1, { orders: [order(1)] }), block(2, { orders: [order(2)] })]);
    let standbyCalls = 0;
    const opening = PostgresWriter.open(url, { wait: true, onStandby: () => standbyCalls++ });
    let opened = false;
    void opening.then(() => (opened = true), () => undefined);
    // It waits while the writer lives.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(opened, false);
    assert.equal(standbyCalls, 1);
    const [writer] = await writerSessions(url);
    assert.equal(writer?.holds, true);
    // As if its process had died: the server ends the session, and with it the lock.
    await query(url, 'SELECT pg_terminate_backend($1)', [writer!.pid]);
    const { value: second, ms } = await within(opening, 5000);
    try {
      assert.ok(ms < 5000, `took over after ${ms} ms`);
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

  test('a standby takes over as soon as the writer closes', async () => {
    const url = await database(server);
    const first = await PostgresWriter.open(url, {});
    let standby = false;
    const opening = PostgresWriter.open(url, { wait: true, onStandby: () => (standby = true) });
    await until(() => standby, 'the second writer says it stands by');
    await first.close();
    const { value: second, ms } = await within(opening, 5000);
    assert.ok(ms < 2000, `took over after ${ms} ms`);
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
      await assert.rejects(within(opening, 2000).then((r) => r.value), { name: 'AbortError' });
      // Only the writer's session is left.
      for (let i = 0; i < 50 && (await writerSessions(url)).length > 1; i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual((await writerSessions(url)).map((s) => s.holds), [true]);
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
    await within(refused, 5000);
    // It let the lock go: a writer of the future could take it.
    assert.deepEqual(await writerSessions(url), []);
  });
});
