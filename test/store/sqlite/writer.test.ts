/** The writer thread: failures reach the caller, and nothing is written behind a failed group. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../../../src/store/sqlite/schema.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { SchemaVersionError } from '../../../src/errors.js';
import { writeBlocks } from '../../../src/store/store.js';
import { openSqliteStore } from '../../../src/store/sqlite/store.js';
import { block, order, tempDatabase } from '../helpers.js';

test('a failed group fails the groups queued behind it, and neither is stored', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  await writeBlocks(writer, [block(1, { orders: [order(1)] }), block(2, { orders: [order(2)] })]);
  // Issued together: the first is refused (block 2 is stored already), the second would leave a hole.
  const refused = writeBlocks(writer, [block(2, { orders: [order(3)] })]);
  const behind = writeBlocks(writer, [block(3, { orders: [order(4)] })]);
  await assert.rejects(refused, /block 2 is not newer than the last stored block 2/);
  await assert.rejects(behind, /not written: an earlier group failed: block 2 is not newer/);
  assert.equal((await writer.lastBlock())?.height, 2n);
  await writer.close();

  const reader = openSqliteStore({ path, readOnly: true });
  t.after(() => reader.close());
  const ids = (await reader.listOrders({}, { newestFirst: false, mode: 'first', limit: 10 })).rows.map((r) => r.key.id);
  assert.deepEqual(ids, [order(1).id, order(2).id]);
});

test('a block the store cannot hold is refused as it is added, and the group keeps the blocks before it', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  const group = writer.newGroup();
  group.add(block(1, { orders: [order(1)] }));
  assert.throws(() => group.add({ ...block(2, { orders: [order(2)] }), orderMessages: [] }), /1 orders but 0 order messages/);
  // The second order's id is refused after the first order was looked at: nothing of the block may remain.
  const badId = block(2, { orders: [order(2), order(3)] });
  badId.orders[1] = { ...badId.orders[1]!, id: 'not-hex' };
  assert.throws(() => group.add(badId), /order id "not-hex" is not 64 hex digits/);
  group.add(block(2, { orders: [order(4)] }));
  await writer.write(group);
  await assert.rejects(writer.write(group), /already handed over/);
  assert.throws(() => group.add(block(3)), /already handed over/);
  await writer.close();

  const reader = openSqliteStore({ path, readOnly: true });
  t.after(() => reader.close());
  const ids = (await reader.listOrders({}, { newestFirst: false, mode: 'first', limit: 10 })).rows.map((r) => r.key.id);
  assert.deepEqual(ids, [order(1).id, order(4).id]);
  assert.equal((await reader.lastBlock())?.height, 2n);
});

test('opening fails as opening the database fails, and the thread is gone', async (t) => {
  const { path } = tempDatabase(t);
  const db = new Database(path);
  db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  db.close();
  // As its class, so that the command line says it in one line.
  await assert.rejects(SqliteWriter.open(path), (e) => e instanceof SchemaVersionError && /newer than this ledger-query knows/.test(e.message));
});

test('an empty group is not sent, and close is idempotent after the thread ends', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, []);
  assert.equal(await writer.lastBlock(), undefined);
  await writer.close();
  await writer.close();
  await assert.rejects(writeBlocks(writer, [block(1)]), /writer thread exited/);
});
