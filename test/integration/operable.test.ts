/**
 * The real command, friendly to run: --version, `config` (passwords
 * masked), a configuration refused before anything starts, serve refusing
 * a folder without a store (a typo) unless a --source is to fill it, logs
 * readable on a terminal and JSON otherwise, request ids unique across HTTP
 * processes, Ctrl-C during ingest saying what the store holds (and a re-run
 * continuing), simulate's progress on a terminal.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { CLI, eventually, runCli, startServe } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-operable-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const PACKAGE = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The height of the last block the embedded store in `data` holds; 0 before it holds one (or exists). */
function storedHeight(data: string): number {
  try {
    const db = new Database(join(data, 'ledger.db'), { readonly: true, fileMustExist: true });
    try {
      return Number((db.prepare('SELECT height FROM last_block').get() as { height: number } | undefined)?.height ?? 0);
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** The lines of stderr that are not log objects. */
const said = (stderr: string) => stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'));

let events: string | undefined;
/** A small simulated network's event file (30 heights). */
function eventFile(): string {
  if (events !== undefined) return events;
  events = join(dir, 'net.events');
  assert.equal(runCli(['simulate', '--out', events, '--blocks', '30', '--seed', '4', '--orders-per-block', '20']).status, 0);
  return events;
}

test('--version and -v print the version of package.json', () => {
  for (const flag of ['--version', '-v']) {
    const r = runCli([flag], undefined, 30_000);
    assert.equal(r.status, 0);
    assert.equal(r.stdout, `ledger-query ${PACKAGE.version}\n`);
  }
});

test('an unknown command, the names every object has included, exits 2 naming it on one line', () => {
  for (const name of ['serv', 'toString', '__proto__', 'constructor', 'hasOwnProperty']) {
    const r = runCli([name], undefined, 30_000);
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `ledger-query: unknown command "${name}": one of serve, ingest, copy, simulate, demo, config (ledger-query --help)\n`);
  }
});

test('`config` prints the effective configuration with where each value came from, the password masked', () => {
  const r = spawnSync(process.execPath, [CLI, 'config', 'serve', '--port', '4321'], {
    encoding: 'utf8', env: { ...process.env, DATABASE_URL: 'postgres://writer:s3cret-pw@db:5432/ledger', LEDGER_QUERY_WORKERS: '3' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!r.stdout.includes('s3cret-pw'), 'no password');
  assert.match(r.stdout, /^database-url = "postgres:\/\/writer:\*\*\*@db:5432\/ledger" +# DATABASE_URL$/m);
  assert.match(r.stdout, /^port = 4321 +# --port$/m);
  assert.match(r.stdout, /^workers = 3 +# LEDGER_QUERY_WORKERS$/m);
  const ingest = runCli(['config', 'ingest', '--allow-gaps'], undefined, 30_000);
  assert.equal(ingest.status, 0, ingest.stderr);
  assert.match(ingest.stdout, /^allow-gaps = true +# --allow-gaps$/m);
  assert.doesNotMatch(ingest.stdout, /^port/m, 'only the settings ingest takes');
});

test('a configuration refused: one line naming the value and where it came from, exit 2, before anything starts', () => {
  const data = join(dir, 'refused');
  const r = spawnSync(process.execPath, [CLI, 'serve', '--data-dir', data, '--source', `file://${eventFile()}`], {
    encoding: 'utf8', env: { ...process.env, LEDGER_QUERY_IDLE_TIMEOUT: 'soon' }, timeout: 30_000,
  });
  assert.equal(r.status, 2);
  assert.deepEqual(said(r.stderr), ['ledger-query serve: LEDGER_QUERY_IDLE_TIMEOUT: must be a number of seconds above 0, got "soon"']);
  assert.equal(existsSync(data), false, 'nothing created');
  const combined = runCli(['serve', '--rate-limit-burst', '4', '--data-dir', data], undefined, 30_000);
  assert.equal(combined.status, 2);
  assert.deepEqual(said(combined.stderr), ['ledger-query serve: --rate-limit-burst goes with --rate-limit']);
});

for (const workers of ['1', '2']) {
  test(`serve without --source on a folder without a store refuses, naming it, and creates nothing (--workers ${workers})`, () => {
    const typo = join(dir, `dta-${workers}`);
    const r = runCli(['serve', '--data-dir', typo, '--port', '0', '--workers', workers], undefined, 30_000);
    assert.equal(r.status, 1);
    assert.deepEqual(said(r.stderr), [
      `ledger-query serve: no ledger-query store in ${typo}: check the folder's name, or ingest into it, or serve it with a --source to create it`,
    ]);
    assert.equal(existsSync(typo), false, 'no empty store left behind');
    const empty = join(dir, `empty-${workers}`);
    mkdirSync(empty);
    assert.equal(runCli(['serve', '--data-dir', empty, '--port', '0', '--workers', workers], undefined, 30_000).status, 1, 'an empty folder too');
    assert.equal(existsSync(join(empty, 'ledger.db')), false);
  });
}

test('with a --source, serve creates the store, as before', async () => {
  const data = join(dir, 'created');
  const server = await startServe(['--data-dir', data, '--workers', '1', '--source', `file://${eventFile()}`]);
  try {
    assert.ok(existsSync(join(data, 'ledger.db')));
    await eventually('the source to be stored', async () => (await fetch(`${server.url}/api/v2/orders?pagination.first=1`)).headers.get('x-block-height') === '30', 30_000);
  } finally {
    await server.stop();
  }
});

/** A GET on a connection of its own, so that node:cluster may hand it to any HTTP process. */
function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test('request ids are unique across HTTP processes; logs are JSON off a terminal, readable lines with --log-format pretty', async () => {
  const data = join(dir, 'ids');
  assert.equal(runCli(['ingest', eventFile(), '--data-dir', data]).status, 0);
  const server = await startServe(['--data-dir', data, '--workers', '2', '--no-ingest', '--log-requests']);
  try {
    await eventually('both HTTP processes to listen', async () => server.output().split('Server listening at').length >= 3, 30_000);
    for (let i = 0; i < 24; i++) assert.equal(await get(`${server.url}/health`), 200);
    await eventually('every request to be logged', async () => server.output().split('request completed').length > 24, 10_000);
    const logged = server.output().split('\n').filter((l) => l.includes('"incoming request"'))
      .map((l) => JSON.parse(l) as { reqId: string; pid: number });
    assert.equal(logged.length, 24);
    assert.ok(new Set(logged.map((l) => l.pid)).size >= 2, 'both processes answered');
    assert.equal(new Set(logged.map((l) => l.reqId)).size, 24, `unique ids: ${logged.map((l) => l.reqId).join(' ')}`);
  } finally {
    await server.stop();
  }
  const pretty = await startServe(['--data-dir', data, '--workers', '1', '--no-ingest', '--log-format', 'pretty']);
  await pretty.stop();
  const line = pretty.output().split('\n').find((l) => l.includes('Server listening at'))!;
  assert.match(line, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): Server listening at http:/, 'a readable line, not JSON');
  assert.doesNotMatch(pretty.output(), /\x1b\[/, 'no colours off a terminal');
});

test('Ctrl-C during ingest stores what it read, says up to which block the store holds, exits 130; a re-run continues', async (t) => {
  const data = join(dir, 'interrupted');
  const bytes = readFileSync(eventFile());
  // Read from a FIFO that stops halfway: ingest waits there, inside a block, for more.
  const fifo = join(dir, 'events.fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const child = spawn(process.execPath, [CLI, 'ingest', fifo, '--data-dir', data], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // The writer is a process of its own: blocked on the FIFO should ingest fail early, it is killed, where a write of this one would hang it.
  const half = Math.floor(bytes.length / 2);
  const writer = spawn(process.execPath, ['-e', `
    const fs = require('node:fs');
    const fd = fs.openSync(${JSON.stringify(fifo)}, 'w');
    fs.writeSync(fd, fs.readFileSync(${JSON.stringify(eventFile())}).subarray(0, ${half}));
    setInterval(() => {}, 1000);`], { stdio: 'ignore' });
  t.after(() => {
    writer.kill('SIGKILL');
    child.kill('SIGKILL');
  });
  // Two blocks committed, read from the store itself: Ctrl-C then comes while ingest waits inside a block.
  let stored = 0;
  await eventually('two blocks to be stored', async () => {
    assert.equal(child.exitCode, null, `ingest exited early:\n${stderr}`);
    stored = storedHeight(data);
    return stored >= 2;
  }, 30_000);
  child.kill('SIGINT');
  assert.equal(await exited, 130, stderr);
  const last = said(stderr).at(-1)!;
  const m = /^ledger-query ingest: stopped on request while reading file:\/\/\S+events\.fifo: the store holds every block up to (\d+) \(\d+ stored now\); run the same command again to continue from there$/.exec(last);
  assert.ok(m, last);
  const height = Number(m[1]);
  assert.ok(height >= stored && height < 30, `stopped halfway, at ${height} (${stored} stored before Ctrl-C)`);
  writer.kill('SIGKILL');

  const again = runCli(['ingest', eventFile(), '--data-dir', data]);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`: \\d+ events, ${30 - height} blocks stored, ${height + 1} already stored \\(1 with another hash\\), last block 30\\b`),
    'the re-run stores the rest, and only the rest');
});

test('simulate shows its progress on a terminal', { skip: spawnSync('script', ['--version']).status !== 0 && 'no `script` to give it a terminal' }, () => {
  const out = join(dir, 'tty.events');
  const r = spawnSync('script', ['-qec', `${process.execPath} ${CLI} simulate --out ${out} --blocks 200`, '/dev/null'], {
    encoding: 'utf8', timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /\r\x1b\[K\[#{24}\] 100%  simulating block 200 of 200\r?\n/);
  assert.match(r.stdout, /tty\.events: \d+ events, 200 heights in 201 blocks/);
  const piped = runCli(['simulate', '--out', join(dir, 'piped.events'), '--blocks', '20']);
  assert.doesNotMatch(piped.stderr + piped.stdout, /\x1b|\r/, 'nothing drawn off a terminal');
});
