/**
 * The real `serve` and `ingest` commands, safe to expose: faults of the
 * process said on one line with their exit status (a port in use, a file
 * that is not a store, a database that refuses), health that tells the
 * truth about a failed source in one process and with HTTP processes, and
 * the HTTP flags taking effect.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually, runCli, startServe, type RunningServer } from '../support/cli.js';
import { within } from '../support/fuzz.js';
import { forEachServer } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-exposed-'));
const running: RunningServer[] = [];
after(async () => {
  await Promise.all(running.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

let folders = 0;
const folder = () => {
  const d = join(dir, `store-${++folders}`);
  mkdirSync(d);
  return d;
};

let template: string | undefined;
/** A folder holding a store (serve refuses one without, unless given a --source): a copy of one made once. */
const storeFolder = () => {
  if (template === undefined) {
    template = folder();
    const events = join(dir, 'template.events');
    assert.equal(runCli(['simulate', '--out', events, '--blocks', '3']).status, 0);
    assert.equal(runCli(['ingest', events, '--data-dir', template]).status, 0);
  }
  const d = join(dir, `store-${++folders}`);
  cpSync(template, d, { recursive: true });
  return d;
};

/** A command's failure: one line, `ledger-query COMMAND: ...`, no stack trace, with this exit status. */
function assertOneLine(r: { status: number | null; stderr: string; stdout: string }, command: string, status: number, ...mentions: string[]): void {
  assert.equal(r.status, status, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));
  assert.equal(lines.length, 1, `one line, not:\n${r.stderr}`);
  assert.ok(lines[0]!.startsWith(`ledger-query ${command}: `), lines[0]);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  for (const m of mentions) assert.ok(lines[0]!.includes(m), `${lines[0]} should mention ${m}`);
}

async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

for (const workers of ['1', '2']) {
  test(`serve on a port in use says so on one line and exits 1 (--workers ${workers})`, async () => {
    const { port, server } = await occupiedPort();
    try {
      const r = runCli(['serve', '--data-dir', storeFolder(), '--port', String(port), '--workers', workers], undefined, 30_000);
      assertOneLine(r, 'serve', 1, `cannot listen on 127.0.0.1:${port}: the port is in use`);
    } finally {
      server.close();
    }
  });
}

test('a ledger.db that is not a database: serve, serve --no-ingest and ingest say so on one line, naming it', () => {
  const data = folder();
  const path = join(data, 'ledger.db');
  writeFileSync(path, Buffer.alloc(8192, 'not a database '));
  const events = join(dir, 'tiny.events');
  assert.equal(runCli(['simulate', '--out', events, '--blocks', '3']).status, 0);
  for (const args of [['serve', '--port', '0'], ['serve', '--no-ingest', '--port', '0'], ['ingest', events]]) {
    const r = runCli([...args, '--data-dir', data], undefined, 30_000);
    assertOneLine(r, args[0]!, 1, `${path} is not a ledger-query store`);
  }
});

test('a PostgreSQL server that cannot be reached: serve and ingest say so on one line, without the password', async () => {
  const { port, server } = await occupiedPort();
  server.close(); // nobody listens there now
  await new Promise((resolve) => server.once('close', resolve));
  const url = `postgres://ledger:s3cret-pw@127.0.0.1:${port}/ledger`;
  const events = join(dir, 'tiny-pg.events');
  assert.equal(runCli(['simulate', '--out', events, '--blocks', '3']).status, 0);
  for (const args of [['serve', '--port', '0'], ['serve', '--no-ingest', '--port', '0'], ['ingest', events]]) {
    const r = runCli([...args, '--database-url', url], undefined, 30_000);
    assertOneLine(r, args[0]!, 1, `cannot reach PostgreSQL at postgres://ledger:***@127.0.0.1:${port}/ledger`);
    assert.ok(!r.stderr.includes('s3cret-pw'));
  }
});

forEachServer((pgServer) => {
  test('a wrong password: serve and ingest say so on one line, without the password', () => {
    const u = new URL(pgServer.url);
    u.password = 'wrong-pw-123';
    const events = join(dir, 'tiny-pw.events');
    assert.equal(runCli(['simulate', '--out', events, '--blocks', '3']).status, 0);
    for (const args of [['serve', '--port', '0'], ['ingest', events]]) {
      const r = runCli([...args, '--database-url', u.toString()], undefined, 30_000);
      assertOneLine(r, args[0]!, 1, 'password authentication failed', `${u.hostname}:${u.port}`);
      assert.ok(!r.stderr.includes('wrong-pw-123'));
    }
  });
});

for (const workers of ['1', '2']) {
  test(`a source that fails makes /health 503 with the reason (--workers ${workers})`, async () => {
    const missing = join(dir, 'no-such.events');
    const s = await startServe(['--data-dir', folder(), '--workers', workers, '--source', `file://${missing}`]);
    running.push(s);
    await eventually('health to report the failed source', async () => (await fetch(`${s.url}/health`)).status === 503, 15_000);
    const body = (await (await fetch(`${s.url}/health`)).json()) as { status: string; reason: string };
    assert.equal(body.status, 'unavailable');
    assert.match(body.reason, /^ingestion failed: .*no-such\.events/);
    assert.equal((await fetch(`${s.url}/ready`)).status, 503);
    await s.stop();
  });
}

test('a socket source no core feeds stalls: /health is 503 past --ready-max-lag, in every HTTP process, and the status says how long', async () => {
  const s = await startServe(['--data-dir', folder(), '--workers', '2', '--source', 'socket://127.0.0.1:0', '--ready-max-lag', '2']);
  running.push(s);
  const status = async () => (await (await fetch(`${s.url}/api/v2/ingest/status`)).json()) as { state: string; secondsSinceRead?: number };
  await eventually('the source to run', async () => (await status()).state === 'running', 15_000);
  // Every process answers from the primary's status: none stays healthy for having been asked late.
  await eventually('health to report the stall', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => fetch(`${s.url}/health`, { headers: { connection: 'close' } })));
    return answers.every((a) => a.status === 503);
  }, 20_000);
  const body = (await (await fetch(`${s.url}/health`)).json()) as { status: string; reason: string };
  assert.match(body.reason, /^ingestion stalled: nothing read from socket:\/\/127\.0\.0\.1:0 for \d+ s, more than the 2 s allowed/);
  assert.ok((await status()).secondsSinceRead! > 2);
  await s.stop();
});

test('serve\'s HTTP flags take effect: head timeout, CORS off, list limit, rate limit', async () => {
  const s = await startServe([
    '--data-dir', storeFolder(), '--workers', '1', '--head-timeout', '0.5', '--cors-origins', 'none', '--max-list-values', '2',
    '--rate-limit', '100', '--rate-limit-burst', '50',
  ]);
  running.push(s);
  const res = await fetch(`${s.url}/api/v2/orders?filter.statuses=1,2,3`);
  assert.equal(res.status, 400);
  assert.match(((await res.json()) as { message: string }).message, /more than 2 values/);
  assert.equal(res.headers.get('access-control-allow-origin'), null);
  assert.equal(res.headers.get('ratelimit-limit'), '100');
  const { connect } = await import('node:net');
  const { port } = new URL(s.url);
  // A connection that sends nothing: the refusal names the head timeout it waited, the flag's.
  const text = await within(30_000, 'the 408 of a silent connection', new Promise<string>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString()));
    socket.on('close', () => resolve(got));
  }));
  assert.match(text, /^HTTP\/1\.1 408 /);
  assert.match(text, /the request did not arrive within 0\.5 s/);
  await s.stop();
});

test('with HTTP processes, a connection past each one\'s --max-connections is closed, not left waiting', async () => {
  const s = await startServe(['--data-dir', storeFolder(), '--workers', '2', '--max-connections', '1']);
  running.push(s);
  const { connect } = await import('node:net');
  const { port } = new URL(s.url);
  const opened = await Promise.all(Array.from({ length: 4 }, () => new Promise<import('node:net').Socket>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port) }, () => resolve(socket));
  })));
  const outcomes = await Promise.all(opened.map((socket) => new Promise<string>((resolve) => {
    let got = '';
    socket.on('data', (c: Buffer) => {
      got += c.toString();
      resolve('answered');
    });
    socket.on('error', () => {});
    socket.once('close', () => resolve(got === '' ? 'closed' : 'answered'));
    // Each is answered or closed as it comes; this only stops a connection left waiting from hanging the test.
    setTimeout(() => resolve(got === '' ? 'waiting' : 'answered'), 30_000);
    // Kept alive: a connection answered holds its place.
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  })));
  opened.forEach((socket) => socket.destroy());
  // node:cluster deals connections to the processes in turn, but not strictly: one may get two.
  const count = (what: string) => outcomes.filter((o) => o === what).length;
  assert.equal(count('waiting'), 0, `none left waiting: ${outcomes.join(', ')}`);
  assert.ok(count('answered') >= 1 && count('answered') <= 2, `at most one per process answered: ${outcomes.join(', ')}`);
  await s.stop();
});

test('bad values of the HTTP flags are usage errors', () => {
  for (const [flag, value] of [['--head-timeout', '0'], ['--max-connections', 'x'], ['--cors-origins', 'not an origin'], ['--rate-limit-burst', '5']]) {
    const r = runCli(['serve', '--data-dir', folder(), flag!, value!], undefined, 30_000);
    assert.equal(r.status, 2, `${flag} ${value}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^ledger-query serve: .*${flag!.slice(2)}`));
  }
});
