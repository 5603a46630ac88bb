/**
 * Writer takeover on PostgreSQL: two `serve --source` processes on one
 * database elect one writer; the other waits as a standby, serving queries.
 * The writer is killed with SIGKILL mid-ingest (no chance to clean up); the
 * standby must take over (at its first ask once the lock is free: the
 * election's own test counts the asks), resume from the stored checkpoint,
 * and leave the database exactly as one clean `ingest` of the same file does.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  eventually, ingestStatus, runCli, startServe, type IngestStatusBody, type RunningServer,
} from '../support/cli.js';
import { createTestDatabase, forEachServer, type TestDatabase, type TestServer } from '../support/postgres.js';
import { compareServers, storeDigest } from '../support/compare-stores.js';
import { within } from '../support/fuzz.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-takeover-'));
const servers: RunningServer[] = [];
const databases: TestDatabase[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(databases.map((d) => d.drop()));
  rmSync(dir, { recursive: true, force: true });
});

async function serve(args: string[]): Promise<RunningServer> {
  const s = await startServe(args);
  servers.push(s);
  return s;
}

async function database(server: TestServer): Promise<TestDatabase> {
  const db = await createTestDatabase(server);
  databases.push(db);
  return db;
}

const height = (s: IngestStatusBody) => Number(s.lastBlock?.height ?? 0);

/**
 * Big enough that ingesting it takes seconds (so there is a "mid-ingest" to
 * kill in, whatever the commit group size), small enough to keep the test short.
 */
const BLOCKS = 800;

forEachServer((server) => {
  test('kill -9 the writer mid-ingest: the standby takes over and the store equals a clean single-writer run', async () => {
    const file = join(dir, 'net.events');
    const sim = runCli(['simulate', '--out', file, '--blocks', String(BLOCKS), '--seed', '23', '--orders-per-block', '30']);
    assert.equal(sim.status, 0, sim.stderr);
    const blocksInFile = Number(/ in (\d+) blocks/.exec(sim.stdout)?.[1]);
    assert.ok(blocksInFile > BLOCKS, sim.stdout); // the first height comes twice

    const clean = await database(server);
    const shared = await database(server);
    const ingested = runCli(['ingest', file, '--database-url', clean.url]);
    assert.equal(ingested.status, 0, ingested.stderr);

    // One HTTP process each: the election is the ingest thread's, whatever serves HTTP (the SIGTERM test below keeps the default).
    const source = ['--workers', '1', '--source', `file://${file}`, '--database-url', shared.url];
    const pair = await Promise.all([serve(source), serve(source)]);

    let writer: RunningServer | undefined;
    let standby: RunningServer | undefined;
    await eventually('one writer and one standby', async () => {
      const [a, b] = await Promise.all(pair.map(ingestStatus));
      const roles = [a!.role, b!.role].sort().join();
      if (roles === 'writer,writer') assert.fail('two instances hold the writer role at once');
      if (roles !== 'standby,writer') return false;
      [writer, standby] = a!.role === 'writer' ? pair : [pair[1]!, pair[0]!];
      return true;
    }, 15_000);
    assert.ok(writer && standby);

    // Mid-ingest: some blocks are stored, and more are still to come.
    await eventually('the writer commits its first blocks', async () => height(await ingestStatus(writer!)) > 0, 30_000, 10);
    const atKill = await ingestStatus(writer);
    assert.equal(atKill.state, 'running', `the writer finished before it could be killed (make the file bigger): ${JSON.stringify(atKill)}`);
    assert.ok(height(atKill) < BLOCKS, JSON.stringify(atKill));

    // The standby serves queries meanwhile, from the blocks the writer stored.
    const standbyStatus = await ingestStatus(standby);
    assert.equal(standbyStatus.role, 'standby');
    assert.equal(standbyStatus.state, 'starting');
    const page = await fetch(`${standby.url}/api/v2/orders?pagination.first=1`);
    assert.equal(page.status, 200);
    assert.ok(Number(page.headers.get('x-block-height')) > 0, 'the standby sees the writer\'s blocks');

    writer.child.kill('SIGKILL');
    const took = await eventually('the standby to become the writer', async () => (await ingestStatus(standby!)).role === 'writer', 30_000, 25);
    console.log(`# killed the writer at height ${height(atKill)} of ${BLOCKS}; the standby took over ${took} ms later`);

    await eventually('the new writer to finish', async () => {
      const s = await ingestStatus(standby!);
      assert.ok(s.state !== 'failed', `the new writer failed: ${s.error}`);
      return s.state === 'finished';
    }, 60_000, 100);
    const done = await ingestStatus(standby);
    assert.equal(height(done), BLOCKS);
    // It resumed from the checkpoint: what the dead writer committed was skipped, not written again.
    assert.ok(done.blocksAlreadyStored! > height(atKill), JSON.stringify(done));
    assert.equal(done.blocksCommitted! + done.blocksAlreadyStored!, blocksInFile, JSON.stringify(done));

    // Same bytes from the API as the clean run, and the same rows underneath.
    const reference = await serve(['--workers', '1', '--no-ingest', '--database-url', clean.url]);
    await compareServers(standby, reference);
    const [got, want] = await Promise.all([storeDigest(shared.url), storeDigest(clean.url)]);
    assert.deepEqual(got, want);
    assert.equal(got.blocks!.rows, BLOCKS);
  });

  test('a standby stops at once on SIGTERM while it waits for the writer lock; the writer keeps writing', async () => {
    const file = join(dir, 'small.events');
    const sim = runCli(['simulate', '--out', file, '--blocks', '20', '--seed', '2', '--orders-per-block', '5']);
    assert.equal(sim.status, 0, sim.stderr);
    const db = await database(server);
    // --follow: the writer never finishes, so it never gives the lock up.
    const source = ['--source', `file://${file}`, '--follow', '--database-url', db.url];
    const writer = await serve(source);
    await eventually('the first to be the writer', async () => (await ingestStatus(writer)).role === 'writer', 15_000);
    const standby = await serve(source);
    await eventually('the second to be a standby', async () => {
      const s = await ingestStatus(standby);
      return s.role === 'standby' && (await ingestStatus(writer)).lastBlock?.height === '20';
    }, 15_000);
    // Stopped while it waits: its wait is cut short (the election's own test aborts one), so it exits cleanly; the
    // deadline only stops a hang.
    await within(30_000, 'the standby to stop', standby.stop());
    assert.equal(standby.child.exitCode, 0, standby.output());
    const w = await ingestStatus(writer);
    assert.equal(w.role, 'writer');
    assert.equal(w.state, 'running');
  });
});
