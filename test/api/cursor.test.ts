import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bundleCursors, orderCursors } from '../../src/api/cursor.js';
import { hexId } from './fixtures.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

test('order and bundle cursors round-trip, including extreme times', () => {
  for (const createdAt of [0n, 1n, -1n, 1_690_000_000_123_456_789n, INT64_MIN, INT64_MAX]) {
    const key = { createdAt, id: hexId('c', 42) };
    assert.deepEqual(orderCursors.decode(orderCursors.encode(key)), key);
    const bundleKey = { timestamp: createdAt, signatureId: hexId('d', 7) };
    assert.deepEqual(bundleCursors.decode(bundleCursors.encode(bundleKey)), bundleKey);
  }
});

test('a cursor is deterministic, URL-safe and fixed length', () => {
  const key = { createdAt: 123n, id: hexId('f', 1) };
  const cursor = orderCursors.encode(key);
  assert.equal(cursor, orderCursors.encode({ ...key }));
  assert.match(cursor, /^[A-Za-z0-9_-]{60}$/);
  assert.equal(encodeURIComponent(cursor), cursor);
});

test('a cursor is bound to its endpoint', () => {
  const orderCursor = orderCursors.encode({ createdAt: 5n, id: hexId('a', 1) });
  const bundleCursor = bundleCursors.encode({ timestamp: 5n, signatureId: hexId('a', 1) });
  assert.notEqual(orderCursor, bundleCursor);
  assert.equal(bundleCursors.decode(orderCursor), undefined);
  assert.equal(orderCursors.decode(bundleCursor), undefined);
});

test('every single-character change of a cursor is refused', () => {
  const cursor = orderCursors.encode({ createdAt: 1_690_000_000_000_000_000n, id: hexId('9', 3) });
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let i = 0; i < cursor.length; i++) {
    for (const c of alphabet) {
      if (c === cursor[i]) continue;
      const garbled = cursor.slice(0, i) + c + cursor.slice(i + 1);
      assert.equal(orderCursors.decode(garbled), undefined, `position ${i} -> ${c}`);
    }
  }
});

test('malformed cursor text is refused, never thrown on', () => {
  const cursor = orderCursors.encode({ createdAt: 1n, id: hexId('0', 1) });
  const bad = [
    '',
    'x',
    cursor.slice(1),
    cursor + 'A',
    cursor.slice(0, 59) + '=',
    cursor.slice(0, 30) + '!' + cursor.slice(31),
    cursor.slice(0, 30) + '+' + cursor.slice(31),
    Buffer.from(JSON.stringify({ createdAt: 1, id: hexId('0', 1) })).toString('base64'),
    'A'.repeat(60),
    '\u0000'.repeat(60),
    'é'.repeat(60),
  ];
  for (const text of bad) assert.equal(orderCursors.decode(text), undefined, JSON.stringify(text));
});

test('encoding refuses an id it could not carry faithfully', () => {
  const refused = { code: 'LQ_INTERNAL', message: /^cannot encode a cursor for id ".*": not 64 hex characters$/ };
  assert.throws(() => orderCursors.encode({ createdAt: 1n, id: 'network' }), refused);
  assert.throws(() => orderCursors.encode({ createdAt: 1n, id: 'z'.repeat(64) }), refused);
  assert.throws(() => orderCursors.encode({ createdAt: 1n, id: hexId('0', 1).slice(0, 62) + 'zz' }), refused);
  assert.throws(() => bundleCursors.encode({ timestamp: 1n, signatureId: hexId('0', 1) + '00' }), refused);
});

test('decoded ids are lowercase 64-hex', () => {
  const key = orderCursors.decode(orderCursors.encode({ createdAt: 9n, id: hexId('a', 0xabcdef) }));
  assert.ok(key);
  assert.match(key.id, /^[0-9a-f]{64}$/);
});
