/**
 * A copy between embedded stores is made inside SQLite (src/store/sqlite/copy-attached.ts):
 * every column comes along, order numbers too, where a copy that passes rows
 * through the neutral form numbers orders again as they load (1, 2, ...).
 * A pruned store's numbers start past 1, so the two ways tell apart.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { copyStore } from '../../../src/store/copy/copy-store.js';
import { writeBlocks } from '../../../src/store/store.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { SqlitePruner } from '../../../src/store/sqlite/pruner.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { placedThenFilled } from '../helpers.js';

const BLOCKS = 40;

test('a copy between embedded stores keeps every column, order numbers included', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lq-copy-direct-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const from = join(dir, 'from');
  const to = join(dir, 'to');
  mkdirSync(from);
  const writer = await SqliteWriter.open(join(from, 'ledger.db'));
  await writeBlocks(writer, placedThenFilled(BLOCKS, 10));
  await writer.close();
  // A window of 30 blocks' time: the orders of the first blocks are forgotten, and their numbers with them.
  const source = openDatabase({ path: join(from, 'ledger.db') });
  new SqlitePruner(source, 30n * 1_000_000_000n).step(1_000_000);
  source.close();

  const result = await copyStore({ kind: 'embedded', dataDir: from }, { kind: 'embedded', dataDir: to });
  assert.equal(result.block?.height, BigInt(BLOCKS));

  const read = (path: string) => {
    const db = openDatabase({ path, readOnly: true });
    try {
      return {
        orders: db.prepare('SELECT * FROM orders_current ORDER BY no').raw(true).all() as unknown[][],
        history: db.prepare('SELECT * FROM orders_history ORDER BY height, seq').raw(true).all() as unknown[][],
        levels: db.prepare('SELECT level, rows FROM order_id_levels ORDER BY level').raw(true).all() as unknown[][],
        ids: db.prepare('SELECT level, count(*) FROM (SELECT 0 AS level, id_bytes FROM order_ids_0 UNION ALL SELECT 5, id_bytes FROM order_ids_5) GROUP BY level').raw(true).all() as unknown[][],
        indexes: db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' ORDER BY name").raw(true).all() as unknown[][],
        integrity: db.pragma('integrity_check', { simple: true }),
      };
    } finally {
      db.close();
    }
  };
  const [want, got] = [read(join(from, 'ledger.db')), read(join(to, 'ledger.db'))];
  const firstNumber = want.orders[0]![0] as bigint;
  assert.ok(firstNumber > 1n, `pruning left the source's first order number at ${firstNumber}`);
  assert.deepEqual(got.orders, want.orders);
  assert.deepEqual(got.history, want.history);
  // The index by id comes along as the source keeps it (its new orders in the first level), not built again into the last.
  assert.ok((want.ids[0]?.[0] as bigint) === 0n, 'the source keeps its orders\' ids in the first level');
  assert.deepEqual(got.levels, want.levels);
  assert.deepEqual(got.ids, want.ids);
  // Indexes come with their tables' rows: every one the source has, each entry where its row is.
  assert.deepEqual(got.indexes, want.indexes);
  assert.equal(got.integrity, 'ok');
});
