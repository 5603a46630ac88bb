import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeBusEvent, encodeBusEvent } from '../../src/ingest/codec.js';
import { decodeOrder } from '../../src/wire/order-message.js';
import { blockEvents, hex, order, withoutMessage } from '../support/events.js';

test('every stored event kind survives encode/decode exactly, 64-bit values included', () => {
  const big = 18_446_744_073_709_551_615n;
  const events = blockEvents(7n, [
    { kind: 'timeUpdate', timestamp: -5n },
    { kind: 'order', order: order(1, { size: big, remaining: big - 1n, createdAt: -(2n ** 62n), reason: 0 }) },
    { kind: 'order', order: order(2, {
      peggedOrder: { reference: 2, offset: '15' },
      icebergOrder: { peakSize: 5n, minimumVisibleSize: 1n, reservedRemaining: 2n ** 60n },
    }) },
    { kind: 'nodeSignature', nodeSignature: { id: 'ab', sig: new Uint8Array([0, 255, 7]), kind: 3 } },
    { kind: 'signerAdded', signerAdded: {
      signatureId: 's1', validatorId: 'v1', timestamp: 9n, newSigner: '0xA', submitter: '0xB', nonce: '12', epochSeq: 2n ** 63n,
    } },
    { kind: 'signerRemoved', signerRemoved: {
      signatureSubmitters: [{ signatureId: 's2', submitter: '0xC' }], validatorId: 'v2', timestamp: 3n,
      oldSigner: '0xD', nonce: '1', epochSeq: 4n,
    } },
    { kind: 'other' },
  ]);
  for (const e of events) {
    const back = decodeBusEvent(encodeBusEvent(e));
    if (back.kind === 'nodeSignature' && e.kind === 'nodeSignature') {
      assert.deepEqual([...back.nodeSignature.sig], [...e.nodeSignature.sig]);
      assert.deepEqual({ ...back, nodeSignature: { ...back.nodeSignature, sig: null } }, { ...e, nodeSignature: { ...e.nodeSignature, sig: null } });
    } else {
      assert.deepEqual(withoutMessage(back), e);
    }
  }
});

test('reason is present only when the event sets it, even when it is zero', () => {
  const [withReason, without] = blockEvents(1n, [
    { kind: 'order', order: order(1, { reason: 0 }) },
    { kind: 'order', order: order(2) },
  ]).slice(1, 3).map((e) => decodeBusEvent(encodeBusEvent(e)));
  assert.ok(withReason?.kind === 'order' && withReason.order.reason === 0);
  assert.ok(without?.kind === 'order' && !('reason' in without.order));
});

test('an order event carries its Order message as a slice of the event bytes, not a copy', () => {
  const [e] = blockEvents(1n, [{ kind: 'order', order: order(1, { reference: 'ref' }) }]).slice(1, 2);
  const bytes = Buffer.from(encodeBusEvent(e!));
  const back = decodeBusEvent(bytes);
  assert.ok(back.kind === 'order' && back.encoded);
  assert.equal(back.encoded.buffer, bytes.buffer, 'shares the input bytes');
  assert.ok(bytes.includes(Buffer.from(back.encoded)));
  assert.deepEqual(decodeOrder(back.encoded), back.order);
});

test('an order whose id is not 64 hex digits is refused: orders are stored by the id bytes', () => {
  for (const id of ['a', hex(1).slice(1), `${hex(1).slice(1)}g`, `${hex(1)}00`]) {
    const [e] = blockEvents(1n, [{ kind: 'order', order: order(1, { id }) }]).slice(1, 2);
    assert.throws(() => decodeBusEvent(encodeBusEvent(e!)), /order id .* is not 64 hex digits/, id);
  }
  const [upper] = blockEvents(1n, [{ kind: 'order', order: order(1, { id: hex(0xabc).toUpperCase() }) }]).slice(1, 2);
  assert.doesNotThrow(() => decodeBusEvent(encodeBusEvent(upper!)), 'either case, as the original decodes hex');
});

test('bytes that are not a BusEvent are refused', () => {
  assert.throws(() => decodeBusEvent(Buffer.from([0x0a, 0xff, 0xff, 0xff])), /not a BusEvent/);
});
