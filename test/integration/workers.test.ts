/**
 * `serve --workers N`: HTTP workers share the port, each with a connection of
 * its own, while the first process ingests. Every worker answers the same
 * bytes, and a committed block reaches every worker's answers (and caches).
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { eventually, runCli, startServe, type RunningServer } from '../support/cli.js';
import { assembleBlocks, eventRecords } from '../support/model-events.js';
import { decodeEvent } from '../support/model-protobuf.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-workers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A GET on a connection of its own, so that the cluster may hand it to any worker. */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; height: string; etag: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, height: String(res.headers['x-block-height']), etag: String(res.headers.etag), body,
      }));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`no answer in 5 s: ${url}`)));
    req.end();
  });
}

/** The last block the writer committed, as its ingest status says. */
async function ingestHeight(server: RunningServer): Promise<string | undefined> {
  const status = JSON.parse((await get(`${server.url}/api/v2/ingest/status`)).body) as { lastBlock?: { height: string } };
  return status.lastBlock?.height;
}

/** The pids that logged a completed request. */
function servingPids(server: RunningServer): Set<number> {
  const pids = new Set<number>();
  for (const line of server.output().split('\n')) {
    if (!line.includes('request completed')) continue;
    pids.add((JSON.parse(line) as { pid: number }).pid);
  }
  return pids;
}

test('two workers answer the same bytes, and each sees a block as soon as it commits', async () => {
  const full = join(dir, 'sim.events');
  assert.equal(runCli(['simulate', '--out', full, '--blocks', '40', '--seed', '3', '--orders-per-block', '10']).status, 0);
  const bytes = readFileSync(full);
  // The file grows while it is served: first 60% of it (cut anywhere: the source waits for the rest), then the rest.
  const file = join(dir, 'growing.events');
  const cut = Math.floor(bytes.length * 0.6);
  writeFileSync(file, bytes.subarray(0, cut));

  const server = await startServe(
    ['--data-dir', join(dir, 'store'), '--workers', '2', '--source', `file://${file}`, '--follow'],
    { LOG_REQUESTS: '1' },
  );
  try {
    // Both workers listening first: until the second does, the first gets every connection.
    await server.outputLines(/Server listening at/, 2);
    const url = `${server.url}/api/v2/orders?pagination.first=20`;
    // The last whole block of the first part, as the model reads it: ingested once the status says so.
    const lastWhole = String(assembleBlocks(eventRecords(bytes.subarray(0, cut)).map(decodeEvent)).at(-1)!.height);
    assert.ok(Number(lastWhole) > 5 && Number(lastWhole) < 40, lastWhole);
    await eventually(`block ${lastWhole} stored`, async () => ingestHeight(server).then((h) => h === lastWhole), 30_000);
    const first = await get(url);
    assert.equal(first.height, lastWhole);
    const answers = await Promise.all(Array.from({ length: 30 }, () => get(url)));
    for (const a of answers) assert.deepEqual(a, first, 'every worker, the same answer');
    assert.equal(servingPids(server).size, 2, 'both workers answered');

    appendFileSync(file, bytes.subarray(cut));
    let latest = await get(url);
    await eventually('a worker to answer block 40', async () => (latest = await get(url)).height === '40', 30_000);
    assert.notEqual(latest.body, first.body);
    // Once one worker shows block 40, every worker does: none keeps serving its earlier answer.
    const after = await Promise.all(Array.from({ length: 30 }, () => get(url, { 'if-none-match': first.etag })));
    for (const a of after) {
      assert.equal(a.status, 200);
      assert.equal(a.height, '40');
      assert.equal(a.body, latest.body);
    }
    const status = JSON.parse((await get(`${server.url}/api/v2/ingest/status`)).body) as { role: string; lastBlock: { height: string } };
    assert.equal(status.role, 'writer');
    assert.equal(status.lastBlock.height, '40');
  } finally {
    await server.stop();
  }
});

test('a worker that dies is replaced; the others serve meanwhile', async () => {
  const server = await startServe(['--data-dir', join(dir, 'store'), '--workers', '2', '--no-ingest'], { LOG_REQUESTS: '1' });
  try {
    const url = `${server.url}/api/v2/orders?pagination.first=3`;
    // Both listening first: with none left, the port itself would close.
    await server.outputLines(/Server listening at/, 2);
    await Promise.all(Array.from({ length: 20 }, () => get(url)));
    const [victim] = [...servingPids(server)];
    process.kill(victim!, 'SIGKILL');
    // A connection handed to the worker as it died is lost with it (node:cluster); the ones after are served.
    await server.outputLines(/exited \(SIGKILL\); starting another/);
    for (let i = 0; i < 20; i++) assert.equal((await get(url)).status, 200, 'served meanwhile');
    await eventually('the new worker to answer too', async () => {
      await get(url);
      return servingPids(server).size === 3;
    }, 30_000);
  } finally {
    await server.stop();
  }
});

test('stopped as soon as its first worker listens, before the others do, serve exits cleanly', async () => {
  // startServe returns at the first worker's "listening" line; with three
  // workers on this machine's cores the others are mostly still starting.
  const server = await startServe(['--data-dir', join(dir, 'store'), '--workers', '3', '--no-ingest']);
  await server.stop();
  assert.equal(server.child.exitCode, 0, server.output());
  assert.doesNotMatch(server.output(), /Error|exited \(code/);
});

test('SIGTERM stops serve though a client holds a connection that sent nothing, one process or two', async () => {
  for (const workers of ['1', '2']) {
    // A head timeout far beyond the wait below: what closes the connection must be the stop, not the timeout.
    const server = await startServe(['--data-dir', join(dir, 'store'), '--workers', workers, '--no-ingest', '--head-timeout', '120']);
    await server.outputLines(/Server listening at/, Number(workers));
    const silent = connect(Number(new URL(server.url).port), '127.0.0.1');
    silent.on('error', () => {});
    await new Promise((resolve) => silent.once('connect', resolve));
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    // Before, Node stopped its head checks as it closed and kept the connection: serve never exited while it stayed.
    const code = await Promise.race([exited, sleep(8000).then(() => 'still running' as const)]);
    silent.destroy();
    if (code === 'still running') await exited;
    assert.equal(code, 0, `--workers ${workers}: ${code} ${Date.now() - started} ms after SIGTERM\n${server.output()}`);
  }
});

/** The serve process's children (its HTTP workers). */
function workerPids(server: RunningServer): string[] {
  const pid = server.child.pid!;
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
}

/** A worker's Node flags, and its MALLOC_ARENA_MAX. */
function workerMemorySettings(child: string): { flags: string[]; arenas: string | undefined } {
  const flags = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').filter((a) => a.startsWith('--max-'));
  const env = readFileSync(`/proc/${child}/environ`, 'utf8').split('\0');
  return { flags, arenas: env.find((e) => e.startsWith('MALLOC_ARENA_MAX='))?.split('=')[1] };
}

test('workers run under the memory ceiling (V8 limits, 2 malloc arenas) unless the user sets them', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
  const cases = [
    [{ NODE_OPTIONS: undefined, MALLOC_ARENA_MAX: undefined }, { flags: ['--max-old-space-size=96', '--max-semi-space-size=2'], arenas: '2' }],
    [{ NODE_OPTIONS: '--max-semi-space-size=8', MALLOC_ARENA_MAX: '4' }, { flags: ['--max-old-space-size=96'], arenas: '4' }],
    [{ NODE_OPTIONS: '--max_old_space_size=300', MALLOC_ARENA_MAX: undefined }, { flags: ['--max-semi-space-size=2'], arenas: '2' }],
  ] as const;
  for (const [env, want] of cases) {
    const server = await startServe(['--data-dir', join(dir, 'store'), '--workers', '2', '--no-ingest'], env);
    try {
      await server.outputLines(/Server listening at/, 2);
      const children = workerPids(server);
      assert.equal(children.length, 2, 'two workers');
      for (const child of children) assert.deepEqual(workerMemorySettings(child), want, JSON.stringify(env));
    } finally {
      await server.stop();
    }
  }
});
