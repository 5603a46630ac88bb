/**
 * The id levels (src/store/sqlite/order-ids.ts), the embedded store's index
 * of orders by id: against a map of the stored ids, every id is found, in
 * one level, whatever orders come and go and however the levels drain; and
 * a store's groups of new orders rewrite few pages of it, where one B-tree
 * of every id took most of its pages each group.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { STATUS } from '../../../src/domain/enums.js';
import { writeBlocks } from '../../../src/store/store.js';
import { DeletedOrderIds, LEVELS, ORDER_ID_LEVELS_SQL, OrderIdLevels } from '../../../src/store/sqlite/order-ids.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { openSqliteStore } from '../../../src/store/sqlite/store.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { sqliteToVersion9 } from '../../support/previous-schema.js';
import { block, hashedId, order, tempDatabase, walPages } from '../helpers.js';

/** The id bytes of order n, as the store helpers hash them. */
const idOf = (n: number) => Buffer.from(hashedId(n), 'hex');

/** Level i holds at most 4 * 4^i ids: a few dozen orders pass through every level. */
function tinyLevels(moveAtLeast: number): { db: Database.Database; levels: OrderIdLevels } {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  db.exec('CREATE TABLE orders_current (no INTEGER PRIMARY KEY, id_bytes BLOB NOT NULL)');
  db.exec(ORDER_ID_LEVELS_SQL);
  db.exec('UPDATE order_id_levels SET capacity = 4 << (2 * level) WHERE capacity IS NOT NULL');
  return { db, levels: new OrderIdLevels(db, moveAtLeast) };
}

test('every stored id is found in exactly one level, whatever the orders added and deleted and the slices moved', () => {
  const groups = fc.array(fc.record({ add: fc.nat(60), remove: fc.nat(12) }), { minLength: 1, maxLength: 40 });
  fc.assert(fc.property(groups, fc.integer({ min: 1, max: 30 }), fc.nat(), (plan, moveAtLeast, seed) => {
    const { db, levels } = tinyLevels(moveAtLeast);
    const insert = db.prepare('INSERT INTO orders_current (id_bytes) VALUES (?)');
    const remove = db.prepare('DELETE FROM orders_current WHERE no = ?');
    const deletedIds = new DeletedOrderIds(db);
    const find = db.prepare('SELECT no FROM order_ids WHERE id_bytes = ?').pluck();
    const model = new Map<string, bigint>();
    const deleted: Buffer[] = [];
    let next = seed * 1000;
    const check = () => {
      for (const [hex, no] of model) assert.equal(find.get(Buffer.from(hex, 'hex')), no, `id ${hex}`);
      for (const id of deleted) assert.equal(find.get(id), undefined, 'a deleted order is not found');
      const [all, distinct] = db.prepare('SELECT count(*), count(DISTINCT id_bytes) FROM order_ids').raw().get() as bigint[];
      assert.equal(all, BigInt(model.size), 'no id left over, none twice');
      assert.equal(distinct, BigInt(model.size));
    };
    for (const { add, remove: removeCount } of plan) {
      for (let i = 0; i < add; i++) {
        const id = idOf(next++);
        const no = insert.run(id).lastInsertRowid as bigint;
        levels.add(id, no);
        model.set(id.toString('hex'), no);
      }
      for (const hex of [...model.keys()].slice(0, removeCount)) {
        deletedIds.add(Buffer.from(hex, 'hex'));
        remove.run(model.get(hex)!);
        model.delete(hex);
        deleted.push(Buffer.from(hex, 'hex'));
      }
      deletedIds.flush();
      const moved = levels.settle();
      assert.ok(moved <= Math.max(moveAtLeast, 4 * add), `${moved} ids moved in one group`);
      check();
    }
    // Left alone, the levels settle: no drain under way, each level but the last within its capacity.
    for (let quiet = 0; quiet < 2;) quiet = levels.settle() === 0 ? quiet + 1 : 0;
    const state = db.prepare('SELECT level, capacity, drained_to FROM order_id_levels ORDER BY level').raw().all() as [bigint, bigint | null, Buffer | null][];
    for (const [level, capacity, drainedTo] of state) {
      assert.equal(drainedTo, null, `level ${level} drains no more`);
      const rows = db.prepare(`SELECT count(*) FROM order_ids_${level}`).pluck().get() as bigint;
      if (capacity !== null) assert.ok(rows <= capacity, `level ${level}: ${rows} ids for ${capacity}`);
    }
    check();
    db.close();
  }), { numRuns: 60 });
});

test('ids move down: a thousand orders reach the levels below the first', () => {
  const { db, levels } = tinyLevels(16);
  const insert = db.prepare('INSERT INTO orders_current (id_bytes) VALUES (?)');
  for (let g = 0; g < 100; g++) {
    for (let i = 0; i < 10; i++) {
      const id = idOf(g * 10 + i);
      levels.add(id, insert.run(id).lastInsertRowid);
    }
    levels.settle();
  }
  const counts = Array.from({ length: LEVELS }, (_, l) => Number(db.prepare(`SELECT count(*) FROM order_ids_${l}`).pluck().get()));
  assert.equal(counts.reduce((a, b) => a + b), 1000);
  assert.ok(counts[0]! <= 4 + 16 + 40, `level 0 holds ${counts[0]}`);
  assert.ok(counts[3]! + counts[4]! > 500, `most ids below: ${counts.join(', ')}`);
  db.close();
});

const STORED = 100_000;
const GROUPS = 20;
const PER_GROUP = 500;

test(`groups of ${PER_GROUP} new orders into a store of ${STORED / 1000}k rewrite a third or less of the pages one index of every id has`, async (t) => {
  const { path } = tempDatabase(t);
  // Levels from 512 ids: a store of 100k orders already spans four of them, as one of 10M spans them at the default sizes.
  const setup = await SqliteWriter.open(path);
  await setup.close();
  const db = new Database(path);
  t.after(() => db.close());
  db.exec('UPDATE order_id_levels SET capacity = 512 << (3 * level) WHERE capacity IS NOT NULL');
  const placed = (from: number, count: number, height: number) =>
    block(height, { orders: Array.from({ length: count }, (_, i) => order(from + i, { id: hashedId(from + i), status: STATUS.FILLED })) });
  const writer = await SqliteWriter.open(path);
  for (let b = 0; b < STORED / 5000; b++) await writeBlocks(writer, [placed(b * 5000, 5000, b + 1)]);
  db.pragma('wal_checkpoint(TRUNCATE)');
  for (let g = 0; g < GROUPS; g++) await writeBlocks(writer, [placed(STORED + g * PER_GROUP, PER_GROUP, STORED / 5000 + g + 1)]);
  // This connection stays open: the writer's close leaves the WAL as the groups wrote it.
  await writer.close();
  const frames = walPages(path);

  const pagesOf = (like: string) => new Set((db.prepare("SELECT pageno FROM dbstat WHERE name LIKE ? ESCAPE '\\'").pluck().all(like) as bigint[]).map(Number));
  const idPages = new Set([...pagesOf('order\\_ids\\_%'), ...pagesOf('orders_current_id')]);
  const written = frames.filter((p) => idPages.has(p)).length;
  db.exec('CREATE INDEX one_index_of_every_id ON orders_current (id_bytes)');
  const oneIndex = pagesOf('one_index_of_every_id').size;
  assert.ok(oneIndex >= 200, `one index of every id has ${oneIndex} pages`);
  assert.ok(written <= (GROUPS * oneIndex) / 3, `${written} pages of the index by id written by ${GROUPS} groups; one index of every id has ${oneIndex}`);
});

test('a store of schema 9 migrates: every id into the last level, the index of every id gone, each order found by id', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  const ids = Array.from({ length: 300 }, (_, n) => hashedId(n));
  await writeBlocks(writer, [1, 2, 3].map((h) => block(h, { orders: ids.slice((h - 1) * 100, h * 100).map((id, i) => order(i, { id })) })));
  await writer.close();
  const v9 = new Database(path);
  sqliteToVersion9(v9);
  v9.close();

  const said: string[] = [];
  openDatabase({ path, notice: (m) => said.push(m) }).close();
  assert.deepEqual(said, ['migrating to schema 10 (orders by id in levels): the ids of 300 orders into the last level, in one sorted pass']);
  const db = new Database(path, { readonly: true });
  t.after(() => db.close());
  assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'orders_current_id'").pluck().get(), 0);
  assert.equal(db.prepare(`SELECT count(*) FROM order_ids_${LEVELS - 1}`).pluck().get(), 300);
  const store = openSqliteStore({ path, readOnly: true });
  t.after(() => store.close());
  for (const id of ids) assert.equal(JSON.parse((await store.getOrder(id)).node!).id, id);
  assert.equal((await store.getOrder(hashedId(300))).node, undefined, 'an id never stored');
});
