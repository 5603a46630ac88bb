/**
 * How prune batches are sized and when they run (src/store/prune-turns.ts):
 * by the writer thread's CPU where the work runs on it, so that a machine
 * whose cores are busy (wall time mostly waiting for one) does not shrink
 * batches to their floor; by wall time where the work is the server's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BATCH_TARGET_MS, MAX_ROWS, MIN_ROWS, PruneTurns, type BatchClock } from '../../src/store/prune-turns.js';

/**
 * A step whose batches take `wallPerRow` ms of wall time and `cpuPerRow` of
 * CPU per row, each finding `available()` rows to prune at most; records
 * the rows asked for.
 */
function turns(clock: BatchClock, wallPerRow: number, cpuPerRow: number, available = () => Infinity) {
  let wall = 0;
  let cpu = 0;
  const asked: number[] = [];
  const pruning = new PruneTurns(
    (maxRows) => {
      asked.push(maxRows);
      const rows = Math.min(maxRows, available());
      wall += rows * wallPerRow;
      cpu += rows * cpuPerRow;
      return { rows, more: rows === maxRows };
    },
    (e) => assert.fail(String(e)),
    () => {},
    () => wall,
    () => cpu,
    clock,
  );
  return { pruning, asked };
}

test("sized by the thread's CPU, batches grow to the target though wall time is ten times it", async () => {
  // 1000 rows: 2 ms of CPU and 200 ms of wall time (a loaded machine).
  const { pruning, asked } = turns('threadCpu', 0.2, 0.002);
  for (let i = 0; i < 6; i++) await pruning.batch();
  assert.deepEqual(asked.slice(0, 4), [1000, 2000, 4000, 8000]);
  const cpuOfLast = asked.at(-1)! * 0.002;
  assert.ok(cpuOfLast <= BATCH_TARGET_MS.threadCpu, `the last batch took ${cpuOfLast} ms of CPU`);
  assert.ok(asked.at(-1)! >= BATCH_TARGET_MS.threadCpu / 0.002 / 2, `rows ${asked.at(-1)}`);
});

test('sized by wall time, the same batches shrink to the floor, and no further', async () => {
  const { pruning, asked } = turns('wall', 0.2, 0.002);
  for (let i = 0; i < 6; i++) await pruning.batch();
  assert.deepEqual(asked, [1000, MIN_ROWS, MIN_ROWS, MIN_ROWS, MIN_ROWS, MIN_ROWS]);
});

test('sized by wall time (the server does the work), batches settle at 20 ms, under the CPU clock\'s 35', async () => {
  // 1000 rows take 10 ms of wall time: batches grow to 2000 rows (20 ms) and stay there.
  const { pruning, asked } = turns('wall', 0.01, 0.0001);
  for (let i = 0; i < 6; i++) await pruning.batch();
  assert.equal(BATCH_TARGET_MS.wall, 20);
  assert.deepEqual(asked, [1000, 2000, 2000, 2000, 2000, 2000]);
  // The same rows by the thread's CPU clock grow on to its 35 ms.
  const byCpu = turns('threadCpu', 0.01, 0.01);
  for (let i = 0; i < 6; i++) await byCpu.pruning.batch();
  assert.deepEqual(byCpu.asked, [1000, 2000, 3500, 3500, 3500, 3500]);
});

test("batches that reach the window's edge (a few rows, quickly) do not grow the next ones", async () => {
  // Between groups pruning catches up with the window: 50 rows, 0.5 ms of CPU, far under the target.
  const { pruning, asked } = turns('threadCpu', 0.01, 0.01, () => 50);
  for (let i = 0; i < 6; i++) await pruning.batch();
  assert.deepEqual(asked, [1000, 1000, 1000, 1000, 1000, 1000]);
});

test('no batch is asked for more than the ceiling, however cheap rows are', async () => {
  const { pruning, asked } = turns('threadCpu', 0, 0.00001);
  for (let i = 0; i < 12; i++) await pruning.batch();
  assert.equal(Math.max(...asked), MAX_ROWS);
});

test("a write's credit is counted by the batches' clock: CPU owed is CPU spent", async () => {
  // 1000 rows take 10 ms of CPU and 100 ms of wall time; a write took 600 ms, 60 of them the thread's CPU.
  const { pruning, asked } = turns('threadCpu', 0.1, 0.01);
  await pruning.batch();
  asked.length = 0;
  pruning.wrote(600, 60);
  while (pruning.wanted(true)) await pruning.batch();
  const cpu = asked.reduce((a, b) => a + b, 0) * 0.01;
  // Pruning stops once it has had the write's 60 ms of CPU (its 600 ms of wall time would be ten times as many batches).
  assert.ok(cpu >= 60 && cpu - asked.at(-1)! * 0.01 < 60, `${cpu} ms of CPU in ${asked.length} batches`);
});
