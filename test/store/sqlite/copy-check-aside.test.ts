/**
 * The source's check read on a thread of its own (src/store/sqlite/copy-check-aside.ts)
 * must read the snapshot the copy's connection began: a commit that falls
 * between the two beginnings makes both begin again, and the thread's check
 * then equals what the copy's connection reads. A target's, read while its
 * indexes are built, equals what the target's own connection reads, and the
 * store it leaves is whole.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { STATUS } from '../../../src/domain/enums.js';
import { writeBlocks } from '../../../src/store/store.js';
import { KEPT_HISTORY, planTables, type TableShape } from '../../../src/store/copy/neutral.js';
import { TableHash } from '../../../src/store/copy/table-hash.js';
import { checkAside } from '../../../src/store/sqlite/copy-check-aside.js';
import { sqliteRows, sqliteTableReader, tableShapes } from '../../../src/store/sqlite/copy-tables.js';
import { openSqliteCopyTarget } from '../../../src/store/sqlite/copy-target.js';
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

test("a copy target's rows, read back on a thread while its indexes are built, are what its own connection reads", async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, Array.from({ length: 20 }, (_, b) => block(b + 1, {
    orders: [order(2 * b), order(2 * b + 1, { remaining: 3n }), ...(b > 0 ? [order(2 * b - 1, { version: 2n, remaining: 0n, status: STATUS.FILLED })] : [])],
  })));
  await writer.close();
  const source = openDatabase({ path, readOnly: true });
  t.after(() => source.close());
  const from = sqliteTableReader(source, path);
  const dir = mkdtempSync(join(tmpdir(), 'lq-copy-target-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  const target = openSqliteCopyTarget(dir);
  const plans = planTables(from.tables, target.tables);
  const orderOf = (shape: TableShape) => (shape.name === KEPT_HISTORY ? shape.key : 'stored' as const);
  for (const { source: s, target: tt } of plans) await target.load(tt, from.rows(s, orderOf(s)));
  const aside = await target.checkAside!();
  assert.ok(aside, 'the indexes are built after the rows, so a thread reads them back meanwhile');
  const checks = aside.start(plans.map((p) => ({ shape: p.target, order: orderOf(p.source) })));
  await target.finishLoad();
  for (const { target: tt } of plans) {
    const want = new TableHash(orderOf(tt) !== 'stored');
    for await (const rows of target.reader.rows(tt, orderOf(tt))) for (const r of rows) want.add(r);
    assert.deepEqual(await checks.get(tt.name), await want.finish(), tt.name);
  }
  await target.complete();

  // Whole, in one file: the WAL of the builds folded back before the rename, every index there.
  assert.deepEqual(readdirSync(dir), ['ledger.db']);
  const copied = openDatabase({ path: join(dir, 'ledger.db'), readOnly: true });
  t.after(() => copied.close());
  assert.equal(copied.pragma('integrity_check', { simple: true }), 'ok');
  const indexes = (db: typeof source) => db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").pluck().all();
  assert.deepEqual(indexes(copied), indexes(source));
});
