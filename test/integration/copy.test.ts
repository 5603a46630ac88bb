/**
 * `ledger-query copy` on the real network's recording, in every direction
 * across the embedded store and each PostgreSQL server of the run: the
 * source holds the recording up to a block in its middle; each copy says
 * that block, and answers every endpoint with the source's bytes; then the
 * rest of the recording ingested into each copy (the blocks it holds are
 * checked against their digests and skipped) gives what a store that
 * ingested the recording whole answers. A target that is not empty is
 * refused on one line, nothing changed.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { BACKENDS, EMBEDDED, type Backend, type FreshStore } from '../support/backends.js';
import { runCli, type RunningServer } from '../support/cli.js';
import { sameAnswers } from '../support/copy-answers.js';
import { copyScratch, named } from '../support/copy-scratch.js';
import { realRecording } from '../support/real-recording.js';
import { ndjson, recordingBlocks } from '../support/recording-blocks.js';

const scratch = copyScratch('lq-copy-');
const { dir, fresh } = scratch;
const served = (s: FreshStore) => scratch.serve(['--no-ingest', ...s.args]);
const stop = (server: RunningServer) => scratch.stop(server);

test('copy in every direction holds the source at its block, answers as it, and ingests on from the next block', async (t) => {
  const recording = realRecording(t);
  if (recording === undefined) return;
  const blocks = recordingBlocks(recording);
  const middle = blocks.ends[Math.floor(blocks.ends.length / 2)]!;

  // The source: the recording up to a block in its middle. The reference: all of it.
  const source = await fresh(EMBEDDED);
  const part = runCli(['ingest', '-', ...source.args], ndjson(blocks, 0, middle.events));
  assert.equal(part.status, 0, part.stderr);
  assert.match(part.stdout, new RegExp(`last block ${middle.height}\\b`));
  const whole = await fresh(EMBEDDED);
  assert.equal(runCli(['ingest', recording, ...whole.args]).status, 0);
  const reference = await served(whole);

  const postgres = BACKENDS.filter((b) => b !== EMBEDDED);
  const copies: { from: FreshStore; to: FreshStore; what: string }[] = [];
  const copy = async (from: FreshStore, to: FreshStore, what: string) => {
    const r = runCli(['copy', '--from', named(from), '--to', named(to)]);
    assert.equal(r.status, 0, `${what}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`: block ${middle.height}, \\d+ rows in \\d+ tables, checked,`), what);
    copies.push({ from, to, what });
  };
  // Into each server first: those copies are the sources of the ones that leave PostgreSQL.
  const onServer = new Map<Backend, FreshStore>();
  for (const b of postgres) {
    const to = await fresh(b);
    await copy(source, to, `embedded -> ${b.name}`);
    onServer.set(b, to);
  }
  await copy(source, await fresh(EMBEDDED), 'embedded -> embedded');
  for (const [i, b] of postgres.entries()) {
    const from = onServer.get(b)!;
    await copy(from, await fresh(EMBEDDED), `${b.name} -> embedded`);
    const next = postgres[(i + 1) % postgres.length]!;
    await copy(from, await fresh(next), `${b.name} -> ${next.name}`);
  }

  const sources = new Map<FreshStore, RunningServer>();
  for (const { from, to, what } of copies) {
    if (!sources.has(from)) sources.set(from, await served(from));
    const target = await served(to);
    const asked = await sameAnswers(target, sources.get(from)!, what);
    assert.ok(asked > 40, `${what}: ${asked} answers compared`);
    await stop(target);
  }
  for (const server of sources.values()) await stop(server);

  for (const { to, what } of copies) {
    const r = runCli(['ingest', recording, ...to.args]);
    assert.equal(r.status, 0, `${what}: ${r.stderr}`);
    // Every block the copy holds was read again and found the same; the rest stored.
    assert.match(r.stdout, new RegExp(`${blocks.ends.length - Number(middle.height) - 1} blocks stored, ${Number(middle.height) + 1} already stored`), what);
    const target = await served(to);
    await sameAnswers(target, reference, `${what}, then the rest ingested`);
    await stop(target);
  }
});

test('a pruned store copied into the other backend answers as its source and prunes on with the same retention', async (t) => {
  const recording = realRecording(t);
  if (recording === undefined) return;
  const blocks = recordingBlocks(recording);
  const cut = blocks.ends[Math.floor((blocks.ends.length * 3) / 4)]!;
  const retention = ['--retention', '3m'];
  // Its blocks span ~12 minutes: three quarters in, a window of 3 minutes has forgotten orders and left live ones resting.
  const source = await fresh(EMBEDDED);
  const part = runCli(['ingest', '-', ...source.args, ...retention], ndjson(blocks, 0, cut.events));
  assert.equal(part.status, 0, part.stderr);
  const state = async (s: FreshStore) => {
    const [row] = await s.select('SELECT setting, window_ns, pruned_below, recheck_height FROM retention');
    return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, String(v)]));
  };
  const before = await state(source);
  const [pruned] = await source.select('SELECT pruned_below, (SELECT count(*) FROM orders_history h WHERE h.height < r.pruned_below) AS resting FROM retention r');
  assert.ok(BigInt(String(pruned!.pruned_below)) > 0n && BigInt(String(pruned!.resting)) > 0n, `pruned, with resting rows: ${String(pruned!.pruned_below)}, ${String(pruned!.resting)}`);

  const stores: { store: FreshStore; what: string }[] = [];
  for (const b of BACKENDS.filter((x) => x !== EMBEDDED)) {
    const there = await fresh(b);
    const back = await fresh(EMBEDDED);
    for (const [from, to, what] of [[source, there, `embedded -> ${b.name}`], [there, back, `${b.name} -> embedded`]] as const) {
      const r = runCli(['copy', '--from', named(from), '--to', named(to)]);
      assert.equal(r.status, 0, `${what}: ${r.stderr}`);
      assert.deepEqual(await state(to), before, `${what}: the retention and the oldest kept block`);
      stores.push({ store: to, what });
    }
    const [resting] = await there.select('SELECT count(*) AS n FROM orders_history_resting');
    assert.equal(String(resting!.n), String(pruned!.resting), `${b.name}: the resting rows are resting rows`);
    // Each index built again after the rows covers every partition, as the migrations' own do.
    const invalid = await there.select('SELECT indexrelid::regclass::text AS name FROM pg_index WHERE NOT indisvalid');
    assert.deepEqual(invalid, [], `${b.name}: indexes left invalid`);
    // The indexes dropped while rows loaded are all back, and every key, as the migrations made them.
    const migrated = await fresh(b);
    assert.equal(runCli(['ingest', '-', ...migrated.args], ndjson(blocks, 0, blocks.ends[0]!.events)).status, 0);
    assert.deepEqual(await keysAndIndexes(there), await keysAndIndexes(migrated), `${b.name}: keys and indexes`);
  }
  const reference = await served(source);
  for (const { store, what } of stores) {
    const copy = await served(store);
    assert.ok(await sameAnswers(copy, reference, what) > 40, what);
    await stop(copy);
  }
  await stop(reference);

  // The rest of the recording, under the same window: each copy prunes on as its source does.
  for (const s of [source, ...stores.map((c) => c.store)]) {
    const r = runCli(['ingest', '-', ...s.args, ...retention], ndjson(blocks, cut.events, blocks.lines.length));
    assert.equal(r.status, 0, r.stderr);
  }
  const after = await state(source);
  assert.ok(BigInt(after.pruned_below!) > BigInt(before.pruned_below!), `the source pruned on: ${before.pruned_below} to ${after.pruned_below}`);
  const whole = await served(source);
  for (const { store, what } of stores) {
    assert.deepEqual(await state(store), after, `${what}, then the rest ingested: pruned as far`);
    const copy = await served(store);
    await sameAnswers(copy, whole, `${what}, then the rest ingested`);
    await stop(copy);
  }
  await stop(whole);
});

test('a target that is not empty is refused on one line, nothing changed', async () => {
  const source = await fresh(EMBEDDED);
  const small = runCli(['simulate', '--out', join(dir, 'small.events'), '--blocks', '20', '--seed', '3']);
  assert.equal(small.status, 0, small.stderr);
  assert.equal(runCli(['ingest', join(dir, 'small.events'), ...source.args]).status, 0);
  for (const backend of BACKENDS) {
    const target = await fresh(backend);
    assert.equal(runCli(['ingest', join(dir, 'small.events'), ...target.args]).status, 0);
    const before = await fingerprint(target);
    const r = runCli(['copy', '--from', named(source), '--to', named(target)], undefined, 30_000);
    assert.equal(r.status, 1, `${backend.name}: ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^ledger-query copy: .* already holds a (ledger-query )?store/);
    assert.deepEqual(await fingerprint(target), before, `${backend.name}: nothing changed`);
  }
});

/** A PostgreSQL store's constraints and indexes, kept history's partitions aside (their spans follow the data). */
async function keysAndIndexes(s: FreshStore): Promise<unknown> {
  const ours = `c.relnamespace = current_schema()::regnamespace AND NOT c.relispartition`;
  return {
    constraints: await s.select(`SELECT c.relname AS t, k.conname AS name, pg_get_constraintdef(k.oid) AS def
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid WHERE ${ours} ORDER BY 1, 2`),
    indexes: await s.select(`SELECT c.relname AS name, pg_get_indexdef(c.oid) AS def FROM pg_class c WHERE c.relkind IN ('i', 'I') AND ${ours} ORDER BY 1`),
  };
}

/** What a store holds: its file's bytes, or every table's rows. */
async function fingerprint(s: FreshStore): Promise<string> {
  if (s.config.databaseUrl === undefined) return createHash('sha256').update(readFileSync(join(s.config.dataDir, 'ledger.db'))).digest('hex');
  const tables = await s.select(`SELECT relname AS t FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' ORDER BY 1`);
  const rows: unknown[] = [];
  for (const { t } of tables) rows.push(t, await s.select(`SELECT md5(string_agg(x::text, ',' ORDER BY x::text)) AS h, count(*) AS n FROM "${String(t)}" x`));
  return JSON.stringify(rows);
}

/** A small simulated network ingested into an embedded store, then `sql` run on its file. */
async function alteredSource(name: string, seed: number, sql: string): Promise<FreshStore> {
  const source = await fresh(EMBEDDED);
  const events = join(dir, `${name}.events`);
  assert.equal(runCli(['simulate', '--out', events, '--blocks', '10', '--seed', String(seed)]).status, 0);
  assert.equal(runCli(['ingest', events, ...source.args]).status, 0);
  const db = new Database(join(source.config.dataDir, 'ledger.db'));
  db.exec(sql);
  db.close();
  return source;
}

test('a copy whose check fails names the table and leaves the target refused as incomplete', async () => {
  // A table the target's schema does not have: its rows could not come along.
  const source = await alteredSource('check', 5, 'CREATE TABLE lq_unknown (n INTEGER PRIMARY KEY) STRICT; INSERT INTO lq_unknown VALUES (1)');
  for (const backend of [EMBEDDED, BACKENDS[1] ?? EMBEDDED]) {
    const target = await fresh(backend);
    const r = runCli(['copy', '--from', named(source), '--to', named(target)]);
    assert.equal(r.status, 65, r.stderr);
    assert.match(r.stderr.trim(), /^ledger-query copy: the target's schema has no table lq_unknown, which the source store has$/);
    const refused = runCli(['serve', '--no-ingest', '--port', '0', ...target.args], undefined, 30_000);
    assert.equal(refused.status, 66, refused.stderr);
    assert.match(refused.stderr, /is an incomplete copy/);
  }
});

test("a row the target cannot hold as it is fails the check of its table, which is named", async (t) => {
  const server = BACKENDS.find((b) => b !== EMBEDDED);
  if (server === undefined) return void t.skip('no PostgreSQL server in this run');
  // The embedded store numbers parties in 64 bits, PostgreSQL in 32: the copy's rows load, and differ.
  const source = await alteredSource('wide', 6, "INSERT INTO parties (no, id) VALUES (4294967296 + 1000000, 'lq-wide')");
  const target = await fresh(server);
  const r = runCli(['copy', '--from', named(source), '--to', named(target)]);
  assert.equal(r.status, 65, r.stderr);
  // Off a terminal, progress comes first as log lines; the fault is the last line.
  assert.match(r.stderr.trim().split('\n').at(-1)!, /^ledger-query copy: the copy of table parties differs from its source \(rows (\d+) against \1, hash \w+ against \w+\): .* stays incomplete$/);
  const refused = runCli(['serve', '--no-ingest', '--port', '0', ...target.args], undefined, 30_000);
  assert.equal(refused.status, 66, refused.stderr);
});
