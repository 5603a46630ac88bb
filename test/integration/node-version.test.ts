/**
 * A Node.js older than 22 is refused on one line, exit 78, before anything
 * native loads (on Node 20 the SQLite driver crashed the process as it
 * loaded). Every command goes through the check: run under a preload that
 * makes this Node say it is 20.20.2, and under a real older Node.js where the
 * machine has one (Debian's is 20).
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { NodeVersionError } from '../../src/errors.js';
import { CLI } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-node-version-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Makes process.versions.node say 20.20.2 before the command's first line runs. */
const SAYS_20 = `data:text/javascript,Object.defineProperty(process.versions, 'node', { value: '20.20.2' });`;

/** Each command with arguments it would otherwise run with: each must be refused all the same. */
const COMMANDS: readonly string[][] = [
  ['serve', '--data-dir', join(dir, 'data'), '--source', 'ndjson://' + join(dir, 'none.ndjson')],
  ['ingest', join(dir, 'none.events'), '--data-dir', join(dir, 'data')],
  ['copy', '--from', join(dir, 'a'), '--to', join(dir, 'b')],
  ['simulate', '--out', join(dir, 'net.events'), '--blocks', '3'],
  ['demo', '--data-dir', join(dir, 'demo')],
  ['config'],
  ['--version'],
  [],
];

const REFUSAL = /^ledger-query: needs Node\.js 22 or newer; this is (\d+\.\d+\.\d+)\n$/;

test('every command run by a Node.js that says it is 20 exits 78 on one line naming 22', () => {
  assert.equal(NodeVersionError.exit, 78);
  for (const args of COMMANDS) {
    const r = spawnSync(process.execPath, ['--import', SAYS_20, CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 78, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' '));
    assert.equal(r.stderr, 'ledger-query: needs Node.js 22 or newer; this is 20.20.2\n', args.join(' '));
  }
});

/** A Node.js older than 22 on this machine's PATH, or undefined. */
function olderNode(): { path: string; version: string } | undefined {
  const found = spawnSync('which', ['-a', 'node'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  for (const path of found) {
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '');
    if (Number(version.split('.')[0]) < 22) return { path, version };
  }
  return undefined;
}

test('a real older Node.js on this machine is refused the same way, and nothing crashes', (t) => {
  const older = olderNode();
  if (older === undefined) {
    // Said, not skipped silently: the preload test above still ran.
    t.diagnostic('no Node.js older than 22 on this machine\'s PATH: checked with a Node.js that says it is 20 only');
    return;
  }
  t.diagnostic(`older Node.js: ${older.path} (${older.version})`);
  for (const args of COMMANDS) {
    const r: SpawnSyncReturns<string> = spawnSync(older.path, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.signal, null, `${args.join(' ')}: ended by ${r.signal}`);
    assert.equal(r.status, 78, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, REFUSAL);
    assert.equal(REFUSAL.exec(r.stderr)![1], older.version);
  }
});
