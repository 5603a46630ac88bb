/**
 * A copy's pace (src/store/copy/pace.ts): against a clock the test moves,
 * it waits exactly as long as the rows read got ahead of the rate, never
 * when they are behind, and a stop ends a wait. Then a real copy between
 * embedded stores at a pace: it takes at least its rows over the rate in
 * each phase, and reads in batches, so that orders are numbered again.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AbortError } from '../../../src/errors.js';
import { copyStore } from '../../../src/store/copy/copy-store.js';
import { Pace } from '../../../src/store/copy/pace.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { SqlitePruner } from '../../../src/store/sqlite/pruner.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { placedThenFilled } from '../helpers.js';

function clocked(): { pace: Pace; waits: number[]; advance: (ms: number) => void } {
  let now = 1_000;
  const waits: number[] = [];
  const pace = new Pace(1_000, () => now, async (ms) => {
    waits.push(ms);
    now += ms;
  });
  return { pace, waits, advance: (ms) => (now += ms) };
}

test('a pace waits for the rows read ahead of its rate, and only for them', async () => {
  const { pace, waits, advance } = clocked();
  // 500 rows at 1,000 a second are due half a second after the start.
  await pace.took(500);
  assert.deepEqual(waits, [500]);
  // 100 ms of reading 200 more: due at 700 ms, it is now 600.
  advance(100);
  await pace.took(200);
  assert.deepEqual(waits, [500, 100]);
  // Slow reading: 50 rows over 2 s is behind the rate, no wait.
  advance(2_000);
  await pace.took(50);
  assert.deepEqual(waits, [500, 100]);
});

test('a stop ends a pace\'s wait as a stop on request', async () => {
  const stop = new AbortController();
  const pace = new Pace(10);
  const waiting = pace.took(1_000, stop.signal);
  stop.abort();
  await assert.rejects(waiting, AbortError);
});

test('a paced copy between embedded stores takes its rows over the rate in each phase, and reads in batches', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lq-copy-pace-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const from = join(dir, 'from');
  mkdirSync(from);
  const writer = await SqliteWriter.open(join(from, 'ledger.db'));
  await writeBlocks(writer, placedThenFilled(20, 10));
  await writer.close();
  // Pruned: the first orders' numbers are gone, so a copy that numbers orders again starts at 1 where the source does not.
  const source = openDatabase({ path: join(from, 'ledger.db') });
  new SqlitePruner(source, 10n * 1_000_000_000n).step(1_000_000);
  const first = source.prepare('SELECT min(no) FROM orders_current').pluck().get() as bigint;
  source.close();
  assert.ok(first > 1n);

  const rate = 500;
  const started = performance.now();
  const paced = await copyStore({ kind: 'embedded', dataDir: from }, { kind: 'embedded', dataDir: join(dir, 'paced') }, { maxRowsPerSecond: rate });
  const seconds = (performance.now() - started) / 1000;
  // Every row is read twice, once from each side, each phase at the rate: a lower bound, whatever the machine's load.
  assert.ok(seconds >= (2 * paced.rows) / rate, `${paced.rows} rows at ${rate} a second in each phase took ${seconds.toFixed(2)} s`);
  const target = openDatabase({ path: join(dir, 'paced', 'ledger.db'), readOnly: true });
  t.after(() => target.close());
  assert.equal(target.prepare('SELECT min(no) FROM orders_current').pluck().get(), 1n, 'numbered again as rows loaded: not copied inside SQLite');
});
