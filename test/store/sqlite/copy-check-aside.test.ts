/**
 * The source's check read on a thread of its own (src/store/sqlite/copy-check-aside.ts)
 * must read the snapshot the copy's connection began: a commit that falls
 * between the two beginnings makes both begin again, and the thread's check
 * then equals what the copy's connection reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { writeBlocks } from '../../../src/store/store.js';
import { TableHash } from '../../../src/store/copy/table-hash.js';
import { checkAside } from '../../../src/store/sqlite/copy-check-aside.js';
import { sqliteRows, tableShapes } from '../../../src/store/sqlite/copy-tables.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { block, order, tempDatabase } from '../helpers.js';

test('a commit between the two snapshots makes both begin again, and the thread reads the copy\'s', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, Array.from({ length: 5 }, (_, b) => block(b + 1, { orders: [order(b)] })));
  await writer.close();
  const other = openDatabase({ path });
  const copy = openDatabase({ path, readOnly: true });
  t.after(() => {
    copy.close();
    other.close();
  });
  const addParty = other.prepare('INSERT INTO parties (id) VALUES (?)');
  const count = copy.prepare('SELECT count(*) FROM parties').pluck();
  let begun = 0;
  let rolledBack = 0;
  const aside = await checkAside(path, () => {
    copy.exec('BEGIN');
    count.get();
    // Another connection commits after the copy's snapshot began, before the thread's: on the first try only.
    if (begun++ === 0) addParty.run('party committed between');
  }, () => {
    rolledBack++;
    copy.exec('ROLLBACK');
  });
  assert.ok(aside, 'a thread on the same snapshot');
  t.after(() => aside.close());
  assert.equal(rolledBack, 1, 'the first try was begun again');
  assert.equal(begun, 2);
  // Committed after both snapshots: neither sees it.
  addParty.run('party committed after');

  const shape = tableShapes(copy).find((s) => s.name === 'parties')!;
  const checks = aside.start([{ shape, order: 'stored' }]);
  const want = new TableHash(false);
  for await (const rows of sqliteRows(copy, shape, 'stored')) for (const r of rows) want.add(r);
  const expected = await want.finish();
  assert.equal(expected.rows, Number(count.get()));
  assert.deepEqual(await checks.get('parties'), expected);
  copy.exec('ROLLBACK');
});
