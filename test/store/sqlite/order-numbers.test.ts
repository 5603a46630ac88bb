/**
 * Order numbers (src/store/sqlite/order-numbers.ts): history rows name their
 * order by a number that grows with the time the order first appears, so a
 * prune of the oldest blocks rewrites pages at the low end of the history
 * index by order only. Counted from the WAL: each frame the batch's commit
 * appends names the page it holds, and dbstat says which pages are the
 * index's. With the index keyed by the (random) order id, the same batch
 * rewrote every page of it.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { writeBlocks } from '../../../src/store/store.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { orderNumbers } from '../../../src/store/sqlite/order-numbers.js';
import { SqlitePruner } from '../../../src/store/sqlite/pruner.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { MigrationError } from '../../../src/errors.js';
import { sqliteToVersion8 } from '../../support/previous-schema.js';
import { hashedId as id, placedThenFilled, tempDatabase, walPages } from '../helpers.js';

const BLOCKS = 400;
const PER_BLOCK = 20;

/** Each block places PER_BLOCK orders (ids of hashes, in no order) and fills those of the block before: two versions each. */
const blocks = () => placedThenFilled(BLOCKS, PER_BLOCK);

test('pruning the oldest tenth of the blocks (38 of 400) rewrites few pages of the history index by order', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, blocks());
  await writer.close();

  const db = openDatabase({ path });
  t.after(() => db.close());
  const pagesOf = db.prepare('SELECT pageno FROM dbstat WHERE name = ?').pluck();
  const indexPages = new Set((pagesOf.all('orders_history_by_order') as bigint[]).map(Number));
  assert.ok(indexPages.size >= 10, `the index has ${indexPages.size} pages`);
  db.pragma('wal_checkpoint(TRUNCATE)');

  // A window of 361 blocks' time: blocks 1-38 are older than it (block 39 is exactly the window before
  // block 400). Orders placed in 1-37 were filled in 2-38 and are forgotten; those of 38, filled in 39,
  // lose their first version.
  const pruner = new SqlitePruner(db, 361n * 1_000_000_000n);
  const batch = pruner.step(1_000_000);
  const historyRows = PER_BLOCK + 37 * 2 * PER_BLOCK;
  assert.equal(batch.rows, historyRows + 37 * PER_BLOCK, 'the rows of blocks 1-38 and the current state of the orders placed in 1-37');
  const rewritten = new Set(walPages(path).filter((p) => indexPages.has(p)));
  assert.ok(
    rewritten.size <= indexPages.size / 3,
    `${rewritten.size} of the index's ${indexPages.size} pages rewritten for a tenth of its rows`,
  );
  // Everything from block 39 on is kept.
  assert.equal(db.prepare('SELECT count(*) FROM orders_history').pluck().get(), BigInt(BLOCKS * PER_BLOCK * 2 - PER_BLOCK - historyRows));
  // The forgotten orders' ids left the id levels (src/store/sqlite/order-ids.ts) with them, and only theirs.
  const ids = db.prepare('SELECT (SELECT count(*) FROM order_ids), (SELECT count(*) FROM order_ids AS i JOIN orders_current AS o ON o.no = i.no AND o.id_bytes = i.id_bytes)').raw().get();
  assert.deepEqual(ids, [BigInt((BLOCKS - 37) * PER_BLOCK), BigInt((BLOCKS - 37) * PER_BLOCK)]);
});

test('a store of schema 8 migrates; a history row whose order has no current state stops it, naming the order', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, blocks().slice(0, 3));
  await writer.close();
  const orphaned = id(PER_BLOCK);
  const db = new Database(path);
  sqliteToVersion8(db);
  db.prepare('DELETE FROM orders_current WHERE id_bytes = ?').run(Buffer.from(orphaned, 'hex'));
  db.close();
  assert.throws(() => openDatabase({ path }), (e: Error) => {
    assert.ok(e instanceof MigrationError, String(e));
    assert.equal(e.message, `cannot migrate: order ${orphaned} has history but no current state`);
    return true;
  });
  // Nothing changed: the store is still at schema 8, its history keyed by id.
  const after = new Database(path, { readonly: true });
  t.after(() => after.close());
  assert.equal(after.pragma('user_version', { simple: true }), 8);
  assert.equal(after.prepare("SELECT count(*) FROM pragma_table_info('orders_history') WHERE name = 'order_no'").pluck().get(), 0);
});

/** Orders were stored block by block, each block's in the order the writer met them; each history row names its own. */
function assertNumbered(db: Database.Database, blockCount: number): void {
  const numbered = db.prepare('SELECT no, id_bytes FROM orders_current ORDER BY no').raw().all() as [bigint, Buffer][];
  assert.deepEqual(numbered.map(([, b]) => b.toString('hex')), Array.from({ length: blockCount * PER_BLOCK }, (_, n) => id(n)));
  const wrong = db.prepare('SELECT count(*) FROM orders_history h JOIN orders_current o ON o.no = h.order_no WHERE o.id_bytes <> h.id_bytes').pluck().get();
  assert.equal(wrong, 0n);
  assert.equal(db.prepare('SELECT count(*) FROM orders_history').pluck().get(), BigInt(blockCount * PER_BLOCK * 2 - PER_BLOCK));
}

async function storeOfSchema8(t: TestContext, blockCount: number): Promise<string> {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, blocks().slice(0, blockCount));
  await writer.close();
  const v8 = new Database(path);
  sqliteToVersion8(v8);
  v8.close();
  return path;
}

test('a store of schema 8 migrates: its orders numbered in the order they were stored, each history row naming its own; progress is said', async (t) => {
  const path = await storeOfSchema8(t, 5);
  const said: string[] = [];
  const db = openDatabase({ path, notice: (m) => said.push(m) });
  t.after(() => db.close());
  assertNumbered(db, 5);
  assert.match(said[0]!, /^migrating to schema 9 \(order numbers\): 100 orders and 180 order versions to rewrite, in one transaction \(\d+ s\)$/);
  assert.match(said.filter((m) => m.includes('schema 9')).at(-1)!, /^migrating to schema 9 \(order numbers\): done \(\d+ s\)$/);
  // A new store has nothing to migrate, and says nothing.
  const heard: string[] = [];
  openDatabase({ path: tempDatabase(t).path, notice: (m) => heard.push(m) }).close();
  assert.deepEqual(heard, []);
});

test('the migration to order numbers copies in slices: slices of 7 rows give the same tables', async (t) => {
  const path = await storeOfSchema8(t, 5);
  const db = new Database(path);
  t.after(() => db.close());
  db.defaultSafeIntegers(true);
  db.transaction(() => orderNumbers(db, () => {}, 7))();
  assertNumbered(db, 5);
  // Every column of every row came along, not only the keys.
  const v8 = new Database(await storeOfSchema8(t, 5), { readonly: true });
  t.after(() => v8.close());
  const rows = (d: Database.Database) => d.prepare('SELECT height, seq, id_bytes, version, market_no, party_no, message FROM orders_history ORDER BY height, seq').raw().all();
  assert.deepEqual(rows(db), rows(v8.defaultSafeIntegers(true)));
  const columns = (v8.prepare("SELECT name FROM pragma_table_info('orders_current')").pluck().all() as string[]).join(', ');
  assert.deepEqual(
    db.prepare(`SELECT ${columns} FROM orders_current ORDER BY no`).raw().all(),
    v8.prepare(`SELECT ${columns} FROM orders_current ORDER BY rowid`).raw().all(),
  );
});
