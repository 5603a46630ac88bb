/**
 * The stream's frames as the original's stream marshaler writes them
 * (docs/compatibility.md, section 12.4, "GET /api/v2/stream/orders"): enums as
 * numbers, every default left out, 64-bit integers as strings, HTML-sensitive
 * characters escaped as Go's encoding/json escapes them; snapshot pages of 50
 * with lastPage on the last only, updates in messages of at most 50 orders.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorFrame, snapshotFrames, streamOrderJson, updateFrames } from '../../../src/api/stream/frames.js';
import { orderNodeJson } from '../../../src/store/order-node.js';
import { hex, order } from '../../store/helpers.js';

test('an order: enums as numbers, defaults left out, 64-bit integers as strings, times on the microsecond', () => {
  const o = order(1, {
    reference: '', expiresAt: 0n, updatedAt: 1678444076736102285n, batchId: 0n, postOnly: false, reduceOnly: true,
    liquidityProvisionId: '', status: 1, side: 2,
  });
  const frame = JSON.parse(streamOrderJson(orderNodeJson(o))) as Record<string, unknown>;
  assert.deepEqual(frame, {
    id: hex(1), marketId: o.marketId, partyId: o.partyId, side: 2, price: '100', size: '10', remaining: '10',
    timeInForce: 1, type: 1, createdAt: String(o.createdAt), status: 1, updatedAt: '1678444076736102000', version: '1',
    reduceOnly: true,
  });
});

test('pegged and iceberg orders keep their messages, less their defaults; an unspecified peg and reason are left out', () => {
  const pegged = order(2, { peggedOrder: { reference: 1, offset: '' }, icebergOrder: { peakSize: 5n, minimumVisibleSize: 2n, reservedRemaining: 0n }, reason: 14 });
  const frame = JSON.parse(streamOrderJson(orderNodeJson(pegged))) as Record<string, unknown>;
  assert.equal(frame.reason, 14);
  assert.deepEqual(frame.peggedOrder, { reference: 1 });
  assert.deepEqual(frame.icebergOrder, { peakSize: '5', minimumVisibleSize: '2' });
  const unspecified = JSON.parse(streamOrderJson(orderNodeJson(order(3, { peggedOrder: { reference: 0, offset: '7' }, reason: 0 })))) as Record<string, unknown>;
  assert.equal('peggedOrder' in unspecified, false);
  assert.equal('reason' in unspecified, false);
  // A number no table names stays that number.
  assert.equal((JSON.parse(streamOrderJson(orderNodeJson(order(4, { status: 42 })))) as { status: number }).status, 42);
});

test('strings are escaped as Go escapes them: <, > and & and the line separators too', () => {
  const text = streamOrderJson(orderNodeJson(order(5, { reference: '<b>&amp;\u2028"\n' })));
  assert.match(text, /"reference":"\\u003cb\\u003e\\u0026amp;\\u2028\\"\\n"/);
  assert.equal((JSON.parse(text) as { reference: string }).reference, '<b>&amp;\u2028"\n');
});

test('snapshots go in pages of 50, lastPage on the last only; no live order is one last page', () => {
  const nodes = (n: number) => Array.from({ length: n }, (_, i) => `{"id":"${i}"}`);
  assert.deepEqual(snapshotFrames([]), ['{"result":{"snapshot":{"lastPage":true}}}']);
  const fifty = snapshotFrames(nodes(50));
  assert.equal(fifty.length, 1);
  assert.match(fifty[0]!, /^\{"result":\{"snapshot":\{"orders":\[\{"id":"0"\}.*\{"id":"49"\}\],"lastPage":true\}\}\}$/);
  const more = snapshotFrames(nodes(51)).map((f) => JSON.parse(f) as { result: { snapshot: { orders: unknown[]; lastPage?: boolean } } });
  assert.deepEqual(more.map((f) => [f.result.snapshot.orders.length, f.result.snapshot.lastPage]), [[50, undefined], [1, true]]);
});

test('updates go in messages of at most 50 orders, none when nothing changed', () => {
  assert.deepEqual(updateFrames([]), []);
  const frames = updateFrames(Array.from({ length: 120 }, (_, i) => `{"id":"${i}"}`));
  assert.deepEqual(frames.map((f) => (JSON.parse(f) as { result: { updates: { orders: unknown[] } } }).result.updates.orders.length), [50, 50, 20]);
  assert.doesNotMatch(frames.join(''), /lastPage/);
});

test('an error frame is a google.rpc.Status, its details left out when empty', () => {
  assert.equal(errorFrame(13, 'Internal error'), '{"error":{"code":13,"message":"Internal error"}}');
  assert.equal(errorFrame(8, 'client reached max subscription allowed'), '{"error":{"code":8,"message":"client reached max subscription allowed"}}');
});
