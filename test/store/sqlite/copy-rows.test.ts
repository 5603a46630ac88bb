/**
 * The embedded store's rows as a copy reads them (src/store/sqlite/copy-tables.ts):
 * bytes come through SQL as hex and are made bytes again, integers as numbers
 * where safe, so every value must come back as the driver itself returns it
 * (read here with its own defaults, Buffers and bigints, as the oracle).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { sqliteRows, tableShapes } from '../../../src/store/sqlite/copy-tables.js';
import type { NeutralRow } from '../../../src/store/copy/neutral.js';

test('a copy reads every value of a table as the driver stores it: NULL and empty bytes apart', async () => {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  db.exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, b BLOB, u ANY, s TEXT) STRICT`);
  const insert = db.prepare('INSERT INTO t (k, b, u, s) VALUES (?, ?, ?, ?)');
  const values: [bigint, Buffer | null, bigint | string | null, string | null][] = [
    [1n, null, null, null],
    [2n, Buffer.alloc(0), 0n, ''],
    [3n, Buffer.from([0, 255, 16]), (1n << 63n) - 1n, 'é€😀'],
    [4n, Buffer.alloc(20_000, 0xab), '18446744073709551615', 'x'.repeat(10_000)],
    [-(1n << 63n), Buffer.from('00', 'hex'), -1n, '\0'],
  ];
  for (const v of values) insert.run(...v);
  const want = (db.prepare('SELECT k, b, u, s FROM t').raw(true).all() as unknown[][]).map((r) =>
    r.map((v, i) => (i === 2 && typeof v === 'string' ? BigInt(v) : v)));

  const [shape] = tableShapes(db);
  assert.ok(shape);
  const got: NeutralRow[] = [];
  for await (const batch of sqliteRows(db, shape, 'stored')) got.push(...batch);
  assert.equal(got.length, want.length);
  got.forEach((row, r) => {
    row.forEach((v, i) => {
      const w = want[r]![i];
      if (w === null) return assert.equal(v, null, `row ${r} column ${i}: NULL, not ${String(v)}`);
      if (Buffer.isBuffer(w)) return assert.ok(v instanceof Uint8Array && Buffer.from(v).equals(w), `row ${r} column ${i}: the same bytes`);
      // Integers as numbers where a double holds them exactly, else bigints: the same value either way.
      if (typeof w === 'bigint') return assert.equal(BigInt(v as number | bigint), w, `row ${r} column ${i}`);
      assert.equal(v, w, `row ${r} column ${i}`);
    });
  });
  db.close();
});
