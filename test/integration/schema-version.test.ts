/**
 * A store written by a newer ledger-query: `ingest` and `serve` refuse it with
 * one line that says to upgrade, exit 1, and leave its schema as it was.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { writeEventFile } from '../../src/simulate/write.js';
import { SCHEMA_VERSION } from '../../src/store/sqlite/schema.js';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-schema-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const NEWER = SCHEMA_VERSION + 1;

function newerStore(name: string): { dataDir: string; version: () => number } {
  const dataDir = join(dir, name);
  mkdirSync(dataDir);
  const path = join(dataDir, 'ledger.db');
  const db = new Database(path);
  db.pragma(`user_version = ${NEWER}`);
  db.close();
  const version = () => {
    const file = new Database(path, { readonly: true });
    try {
      return file.pragma('user_version', { simple: true }) as number;
    } finally {
      file.close();
    }
  };
  return { dataDir, version };
}

const refusal = new RegExp(`^ledger-query (ingest|serve): database schema version ${NEWER} is newer than this ledger-query knows \\(${SCHEMA_VERSION}\\); upgrade ledger-query\\n$`);

test('embedded store of a newer schema: ingest refuses it in one line, exit 1', async () => {
  const file = join(dir, 'net.events');
  await writeEventFile(file, { seed: 3, blocks: 3, ordersPerBlock: 2 });
  const store = newerStore('ingest');
  const r = runCli(['ingest', file, '--data-dir', store.dataDir], undefined, 30_000);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stderr, refusal);
  assert.equal(store.version(), NEWER);
});

test('embedded store of a newer schema: serve refuses it in one line, exit 1, with and without --no-ingest', () => {
  for (const flags of [[], ['--no-ingest']]) {
    const store = newerStore(`serve${flags.join('')}`);
    const r = runCli(['serve', ...flags, '--data-dir', store.dataDir, '--port', '0'], undefined, 30_000);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, refusal);
    assert.equal(store.version(), NEWER);
  }
});
