/**
 * The connection written as bytes: the same JSON as building it as
 * text, whatever the characters of the nodes, the size of the page, and how
 * the pages before it grew the buffer it is written in.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { CursorCodec } from '../../src/api/cursor.js';
import { BodyWriter, connectionBody } from '../../src/api/connection.js';
import type { Page } from '../../src/domain/page.js';

/** A codec whose cursors are as long as the key says: pages with cursors longer than the envelope's estimate. */
const lengthyCursors: CursorCodec<number> = {
  encode: (key) => 'c'.repeat(key),
  decode: () => undefined,
};

/** The envelope as the original's JSON would have it, from parsed values. */
function expected(field: string, page: Page<number>): unknown {
  const edges = page.rows.map((r) => ({ node: JSON.parse(r.json) as unknown, cursor: lengthyCursors.encode(r.key) }));
  return {
    [field]: {
      edges,
      pageInfo: {
        hasNextPage: page.hasNextPage,
        hasPreviousPage: page.hasPreviousPage,
        startCursor: edges[0]?.cursor ?? '',
        endCursor: edges.at(-1)?.cursor ?? '',
      },
    },
  };
}

const node = fc.record({ id: fc.string({ unit: 'binary' }), reference: fc.string({ unit: 'grapheme', maxLength: 300 }) });
const page = fc.record({
  rows: fc.array(fc.record({ json: node.map((n) => JSON.stringify(n)), key: fc.integer({ min: 0, max: 400 }) }), { maxLength: 40 }),
  hasNextPage: fc.boolean(),
  hasPreviousPage: fc.boolean(),
});

test('any page, any characters: the bytes are the UTF-8 of the envelope, exactly', () => {
  fc.assert(fc.property(page, (p) => {
    const body = connectionBody('orders', p, lengthyCursors);
    assert.deepEqual(JSON.parse(body.toString('utf8')), expected('orders', p));
    // The exact bytes, not a buffer with room to spare.
    assert.equal(body.byteLength, Buffer.byteLength(body.toString('utf8')));
  }), { numRuns: 300 });
});

test('a page larger than any before it grows the buffer; a small one after it is not cut or padded', () => {
  const big: Page<number> = {
    rows: Array.from({ length: 3000 }, (_, i) => ({ json: JSON.stringify({ id: i, text: 'é🚀'.repeat(50) }), key: 70 })),
    hasNextPage: true,
    hasPreviousPage: false,
  };
  const small: Page<number> = { rows: [{ json: '{"id":"x"}', key: 1 }], hasNextPage: false, hasPreviousPage: true };
  for (const p of [small, big, small, big]) {
    const body = connectionBody('bundles', p, lengthyCursors);
    assert.deepEqual(JSON.parse(body.toString('utf8')), expected('bundles', p));
  }
  const empty: Page<number> = { rows: [], hasNextPage: false, hasPreviousPage: false };
  assert.equal(
    connectionBody('orders', empty, lengthyCursors).toString('utf8'),
    '{"orders":{"edges":[],"pageInfo":{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"","endCursor":""}}}',
  );
});

test('written through a buffer of one byte at first: every page grows it, and no edge is cut short', () => {
  fc.assert(fc.property(page, fc.integer({ min: 1, max: 64 }), (p, initialBytes) => {
    const body = connectionBody('orders', p, lengthyCursors, new BodyWriter(initialBytes));
    assert.deepEqual(JSON.parse(body.toString('utf8')), expected('orders', p));
  }), { numRuns: 300 });
});

test('one writer through pages of every size in turn: each body is whole, none holds another\'s bytes', () => {
  const out = new BodyWriter(1);
  const row = (i: number) => ({ json: JSON.stringify({ id: i, text: 'ü€𝄞'.repeat(i % 13) }), key: i % 90 });
  for (const n of [0, 1, 2, 5, 40, 3, 200, 1, 120, 0]) {
    const p: Page<number> = { rows: Array.from({ length: n }, (_, i) => row(i)), hasNextPage: n % 2 === 0, hasPreviousPage: true };
    assert.deepEqual(JSON.parse(connectionBody('orders', p, lengthyCursors, out).toString('utf8')), expected('orders', p), `a page of ${n}`);
  }
});
