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

/** Values as the driver returns them with its own defaults, integers read safe, as comparable text. */
const plain = (rows: unknown[][]) => rows.map((r) => r.map((v) => (Buffer.isBuffer(v) ? `x${v.toString('hex')}` : String(v))));
const neutralPlain = (rows: NeutralRow[]) => rows.map((r) => r.map((v) => (v instanceof Uint8Array ? `x${Buffer.from(v).toString('hex')}` : String(v))));

test('a copy reads a table in pages along its key: every row once, in order, whatever the page size', async () => {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  // Keys that only compare right bound as stored: past a double's reach, past int64 (an ANY column keeps those as TEXT), negative, bytes.
  db.exec(`CREATE TABLE w (u ANY NOT NULL, b BLOB NOT NULL, v TEXT, PRIMARY KEY (u, b)) WITHOUT ROWID, STRICT;
    CREATE TABLE r (s TEXT, n INTEGER) STRICT;`);
  const keys: (bigint | string)[] = [-(1n << 63n), -(1n << 53n) - 3n, -1n, 0n, 7n, (1n << 53n) + 1n, (1n << 53n) + 2n, (1n << 63n) - 1n,
    '9223372036854775808', '18446744073709551615'];
  const insertW = db.prepare('INSERT INTO w (u, b, v) VALUES (?, ?, ?)');
  const insertR = db.prepare('INSERT INTO r (rowid, s, n) VALUES (?, ?, ?)');
  keys.forEach((u, i) => {
    for (const b of [Buffer.alloc(0), Buffer.from([0]), Buffer.from([0, 1]), Buffer.from([255])]) insertW.run(u, b, `${i}`);
  });
  // Rowids past a double's reach and below zero; a rowid table is paged by its rowid, whatever its columns.
  for (const [i, rowid] of [-(1n << 62n), -5n, 1n, 2n, (1n << 53n) + 1n, (1n << 53n) + 2n, (1n << 63n) - 1n].entries()) insertR.run(rowid, null, i);
  const want = {
    w: plain(db.prepare('SELECT u, b, v FROM w ORDER BY u, b').raw(true).all() as unknown[][]),
    r: plain(db.prepare('SELECT s, n FROM r ORDER BY rowid').raw(true).all() as unknown[][]),
  };
  const shapes = tableShapes(db);
  for (const name of ['w', 'r'] as const) {
    const shape = shapes.find((s) => s.name === name)!;
    for (const pageRows of [1, 2, 3, 7, 1000]) {
      for (const order of name === 'w' ? ['stored', shape.key] as const : ['stored'] as const) {
        const got: NeutralRow[] = [];
        for await (const batch of sqliteRows(db, shape, order, 'main', pageRows)) got.push(...batch);
        assert.deepEqual(neutralPlain(got), want[name], `${name} in pages of ${pageRows}, ${String(order)}`);
      }
    }
  }
  // Not along the key: read in one pass, in the order asked.
  const w = shapes.find((s) => s.name === 'w')!;
  const byValue: NeutralRow[] = [];
  for await (const batch of sqliteRows(db, w, ['v', 'u', 'b'], 'main', 2)) byValue.push(...batch);
  assert.deepEqual(neutralPlain(byValue), plain(db.prepare('SELECT u, b, v FROM w ORDER BY v, u, b').raw(true).all() as unknown[][]));
  db.close();
});
