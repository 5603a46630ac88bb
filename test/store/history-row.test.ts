/**
 * What a reader of order history calls (src/store/history-row.ts): a row as
 * a backend stores it back to the Order message the network sent, and to
 * the Order; and the version a migration reads from a stored message
 * (orderVersionOf), whole or less its ids.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InternalError } from '../../src/errors.js';
import { NETWORK_PARTY } from '../../src/domain/order.js';
import { leadingIdBytes } from '../../src/store/history-message.js';
import { historyRowMessage, historyRowOrder } from '../../src/store/history-row.js';
import { encodeOrder, orderVersionOf } from '../../src/wire/order-message.js';
import { hex, order } from './helpers.js';

const idBytes = (n: number) => Buffer.from(hex(n), 'hex');

test('a row that left its ids out gives back the message and the Order, given its market and party', () => {
  const o = order(7, { reference: 'ref', version: 4n, icebergOrder: { peakSize: 3n, minimumVisibleSize: 1n, reservedRemaining: 9n } });
  const message = Buffer.from(encodeOrder(o));
  const leading = leadingIdBytes(message, { id: o.id, market: o.marketId, party: o.partyId });
  assert.equal(leading, 198);
  const row = { id_bytes: idBytes(7), message: message.subarray(leading), market: o.marketId, party: o.partyId };
  assert.deepEqual(historyRowMessage(row), message);
  assert.deepEqual(historyRowOrder(row), o);
});

test('a row kept whole (no market, no party) gives back its message as it is', () => {
  const o = order(8, { partyId: NETWORK_PARTY });
  const message = Buffer.from(encodeOrder(o));
  const row = { id_bytes: idBytes(8), message, market: null, party: null };
  assert.deepEqual(historyRowMessage(row), message);
  assert.deepEqual(historyRowOrder(row), o);
});

test('a row we could not have written is an internal error, not a wrong Order', () => {
  const message = Buffer.from(encodeOrder(order(9)));
  assert.throws(() => historyRowMessage({ id_bytes: idBytes(9), message, market: hex(1000), party: null }),
    (e) => e instanceof InternalError && /names its market only/.test(e.message));
  assert.throws(() => historyRowMessage({ id_bytes: idBytes(9).subarray(1), message, market: null, party: null }),
    (e) => e instanceof InternalError && /31 bytes/.test(e.message));
  assert.throws(() => historyRowOrder({ id_bytes: idBytes(9), message: Buffer.of(0x0a, 0x40, 1), market: null, party: null }),
    (e) => e instanceof InternalError && /holds no Order message/.test(e.message));
});

test("orderVersionOf reads field 16 of a message, whole or less its leading ids, as protobuf decodes it", () => {
  fc.assert(fc.property(fc.nat(1000), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.string(), (n, version, reference) => {
    const o = order(n, { version, reference });
    const message = encodeOrder(o);
    assert.equal(orderVersionOf(message), version);
    assert.equal(orderVersionOf(message.subarray(leadingIdBytes(message, { id: o.id, market: o.marketId, party: o.partyId }))), version);
  }));
  assert.equal(orderVersionOf(new Uint8Array(0)), 0n, 'absent: 0');
  // A length past the end: protobufjs's reader refuses it.
  assert.throws(() => orderVersionOf(Buffer.of(0x0a, 0x40, 1)), { name: 'RangeError', message: /index out of range/ }, 'bytes that are not a message');
});
