/** The backend-neutral parts of a copy: table checks, table plans, and COPY's binary form read back. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CopyMismatchError } from '../../src/errors.js';
import { planTables, type TableShape } from '../../src/store/copy/neutral.js';
import { HashThread, TableHash } from '../../src/store/copy/table-hash.js';
import { BinaryCopyReader } from '../../src/store/postgres/copy-binary-reader.js';
import { BinaryCopyWriter } from '../../src/store/postgres/copy-binary.js';

type Rows = (number | bigint | string | Uint8Array | null)[][];

const hashOf = (rows: Rows, h = new TableHash(false)) => {
  for (const r of rows) h.add(r);
  return h.finish();
};

test('a table check tells apart what a backend could confuse, and only that', async () => {
  const rows = [[1n, 'a', Buffer.from([1, 2]), null], [(1n << 64n) - 1n, '', Buffer.alloc(0), -(1n << 63n)]];
  assert.deepEqual(await hashOf(rows), await hashOf(rows.map((r) => [...r])));
  assert.equal((await hashOf(rows)).rows, 2);
  const differs = [
    [[1n, 'a', Buffer.from([1, 2]), 0n], rows[1]!], // null is not 0
    [[1n, '', Buffer.from([1, 2]), null], rows[1]!], // nor ''
    [['1', 'a', Buffer.from([1, 2]), null], rows[1]!], // text is not a number
    [[1n, 'a', Buffer.from('a'), null], rows[1]!],
    [[1n, 'a', Buffer.from([1]), Buffer.from([2]), null], rows[1]!], // values are framed
    [rows[0]!], // a row missing
    [rows[0]!, rows[1]!, rows[1]!], // or twice
    [[1n, 'a'], [Buffer.from([1, 2]), null, ...rows[1]!]], // rows are framed: a value moved to the next row
  ];
  for (const other of differs) assert.notEqual((await hashOf(other as Rows)).hash, (await hashOf(rows)).hash, JSON.stringify(other, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
  assert.notEqual((await hashOf([[-1n]])).hash, (await hashOf([[(1n << 64n) - 1n]])).hash, 'a negative int64 is not its unsigned twin');
  // An integer is read as a number where it is safe and as a bigint past that: the same value either way.
  const ints = [0, 1, -1, 2 ** 32, -(2 ** 32) - 7, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
  assert.deepEqual(await hashOf([ints]), await hashOf([ints.map(BigInt)]));
  assert.notEqual((await hashOf([[1]])).hash, (await hashOf([['1']])).hash);
  // A table read in key order on both sides is hashed as a stream, where order counts.
  assert.notEqual((await hashOf(rows, new TableHash(true))).hash, (await hashOf([rows[1]!, rows[0]!], new TableHash(true))).hash);
  assert.equal((await hashOf(rows, new TableHash(true))).hash, (await hashOf(rows.map((r) => [...r]), new TableHash(true))).hash);
});

test('a table check does not depend on the order rows are read in, nor on where it hashes them', async () => {
  // Rows past a chunk (a megabyte), one of them larger than a chunk: a row is hashed whole wherever it falls.
  const rows: Rows = Array.from({ length: 30_000 }, (_, i) => [BigInt(i), `order ${i}`, Buffer.alloc(i % 97, i)]);
  rows.splice(12_345, 0, [-5n, 'large', Buffer.alloc(3 << 20, 7)]);
  const inPlace = await hashOf(rows);
  assert.equal(inPlace.rows, 30_001);
  assert.deepEqual(await hashOf([...rows].reverse()), inPlace);
  const thread = new HashThread();
  try {
    const [a, b, c] = await Promise.all([hashOf(rows, thread.table(false)), hashOf(rows.slice(1), thread.table(false)), hashOf(rows, thread.table(true))]);
    assert.deepEqual(a, inPlace, 'hashed on the thread as in place');
    assert.notEqual(b.hash, inPlace.hash);
    assert.deepEqual(c, await hashOf(rows, new TableHash(true)), 'streamed on the thread as in place');
  } finally {
    await thread.close();
  }
});

const shape = (name: string, columns: [string, TableShape['columns'][number]['kind']][]): TableShape => ({
  name, key: [columns[0]![0]], columns: columns.map(([n, kind]) => ({ name: n, kind, type: kind })),
});

test('a plan pairs tables by name, columns in the source order, and names a table the stores disagree on', () => {
  const source = [shape('blocks', [['height', 'u64'], ['hash', 'text']])];
  const [plan] = planTables(source, [shape('blocks', [['hash', 'text'], ['height', 'u64']])]);
  assert.deepEqual(plan!.target.columns.map((c) => c.name), ['height', 'hash']);
  assert.throws(() => planTables(source, [shape('blocks', [['height', 'int'], ['hash', 'text']])]), (e: unknown) => e instanceof CopyMismatchError && /table blocks differs/.test(e.message));
  assert.throws(() => planTables(source, [...source, shape('retention', [['blocks', 'u64']])]), /no table retention/);
  assert.throws(() => planTables([...source, shape('x', [['a', 'int']])], source), /target's schema has no table x/);
  // A PostgreSQL target reads the retention and the blocks' rate as it loads kept history.
  const tables = ['blocks', 'last_block', 'orders_history', 'retention'].map((n) => shape(n, [['a', 'int']]));
  assert.deepEqual(planTables(tables, tables).map((p) => p.source.name), ['retention', 'blocks', 'last_block', 'orders_history']);
});

test("COPY's binary form reads back field by field, however the bytes are cut", () => {
  const out = new BinaryCopyWriter();
  const rows = [[5, 'ünïcode', null], [-1, '', Buffer.from([0, 255])]] as const;
  for (const [n, s, b] of rows) {
    out.row(3);
    out.int4(n);
    out.text(s);
    if (b === null) out.null();
    else out.bytea(b);
  }
  const data = out.finish();
  for (const size of [1, 3, 7, data.length]) {
    const reader = new BinaryCopyReader(3);
    const got: (Buffer | null)[][] = [];
    for (let at = 0; at < data.length; at += size) got.push(...reader.push(data.subarray(at, at + size)));
    reader.end();
    assert.deepEqual(got.map(([n, s, b]) => [n!.readInt32BE(0), s!.toString('utf8'), b == null ? null : [...b]]), [[5, 'ünïcode', null], [-1, '', [0, 255]]], `chunks of ${size}`);
  }
  assert.throws(() => new BinaryCopyReader(3).end(), /without its trailer/);
});
