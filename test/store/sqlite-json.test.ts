/** The JSON SQLite emits for order and bundle nodes: key order, escaping, enum names, optional members. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Order } from '../../src/domain/order.js';
import { bundleJson, orderJson, packSignatures } from '../support/model.js';
import { block, hex, order, tempStore } from './helpers.js';
import { writeBlocks } from '../../src/store/store.js';

const FIRST: { newestFirst: boolean; mode: 'first'; limit: number } = { newestFirst: false, mode: 'first', limit: 100 };

async function storedJson(orders: Order[], t: Parameters<typeof tempStore>[0]): Promise<string[]> {
  const { store } = tempStore(t);
  await writeBlocks(store, [block(1, { orders })]);
  return (await store.listOrders({}, FIRST)).rows.map((r) => r.json);
}

test('an order node has every field in the original order, 64-bit values as strings, enums as names', async (t) => {
  const [json] = await storedJson([order(1, { side: 2, price: '123456789012345678901234567890', createdAt: 5n, updatedAt: 6n, expiresAt: 7n, version: 3n, batchId: 4n, postOnly: true })], t);
  assert.equal(
    json,
    `{"id":"${hex(1)}","marketId":"${hex(1001)}","partyId":"${hex(2001)}","side":"SIDE_SELL",` +
      `"price":"123456789012345678901234567890","size":"10","remaining":"10","timeInForce":"TIME_IN_FORCE_GTC",` +
      `"type":"TYPE_LIMIT","createdAt":"5","status":"STATUS_ACTIVE","expiresAt":"7","reference":"",` +
      `"updatedAt":"6","version":"3","batchId":"4","liquidityProvisionId":"","postOnly":true,"reduceOnly":false}`,
  );
});

test('reason, peggedOrder and icebergOrder appear exactly when the event carried them, in their places', async (t) => {
  const with_ = order(1, {
    status: 6, reason: 0,
    peggedOrder: { reference: 3, offset: '-5' },
    icebergOrder: { peakSize: 1n, minimumVisibleSize: 2n, reservedRemaining: 3n },
  });
  const [json] = await storedJson([with_], t);
  const node = JSON.parse(json!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(node), [
    'id', 'marketId', 'partyId', 'side', 'price', 'size', 'remaining', 'timeInForce', 'type', 'createdAt', 'status',
    'expiresAt', 'reference', 'reason', 'updatedAt', 'version', 'batchId', 'peggedOrder', 'liquidityProvisionId',
    'postOnly', 'reduceOnly', 'icebergOrder',
  ]);
  assert.equal(node.reason, 'ORDER_ERROR_UNSPECIFIED', 'a reason set to zero is still a reason the event set');
  assert.deepEqual(node.peggedOrder, { reference: 'PEGGED_REFERENCE_BEST_ASK', offset: '-5' });
  assert.deepEqual(node.icebergOrder, { peakSize: '1', minimumVisibleSize: '2', reservedRemaining: '3' });
  assert.equal(json, orderJson(with_));
});

test('enum numbers no table knows are bare JSON numbers', async (t) => {
  const o = order(1, { side: 9, status: 42, type: 7, timeInForce: 99, reason: 38, peggedOrder: { reference: 11, offset: '1' } });
  const [json] = await storedJson([o], t);
  const node = JSON.parse(json!) as Record<string, unknown>;
  assert.equal(node.side, 9);
  assert.equal(node.status, 42);
  assert.equal(node.type, 7);
  assert.equal(node.timeInForce, 99);
  assert.equal(node.reason, 38);
  assert.deepEqual(node.peggedOrder, { reference: 11, offset: '1' });
  assert.equal(json, orderJson(o));
});

test('every string field is escaped exactly as JSON.stringify escapes it (the order id is hex, checked at ingestion)', async (t) => {
  const nasty = 'q"b\\s/ \n\t\r\u0000\u0001\u001f\u007f é ✓ 😀 \u2028 </script>';
  const o = order(1, {
    marketId: `m${nasty}`, partyId: `p${nasty}`, price: nasty, reference: nasty,
    liquidityProvisionId: nasty, peggedOrder: { reference: 1, offset: nasty },
  });
  const [json] = await storedJson([o], t);
  assert.equal(json, orderJson(o));
  assert.equal((JSON.parse(json!) as { reference: string }).reference, nasty);
});

test('a bundle node: fields in order, escaped strings, signatures packed in byte order', async (t) => {
  const { store } = tempStore(t);
  const added = { signatureId: 'ab', validatorId: 'v', timestamp: -3n, newSigner: 'new"signer', submitter: '0xS\n', nonce: '18446744073709551616', epochSeq: (1n << 64n) - 1n };
  const sigs = [Uint8Array.from([0xff]), Uint8Array.from([0x00, 0x01]), Uint8Array.from([0x00]), Uint8Array.from([0xab, 0xcd, 0xef])];
  await writeBlocks(store, [block(1, { signersAdded: [added], nodeSignatures: sigs.map((sig) => ({ id: 'AB', sig, kind: 3 })) })]);
  const [row] = (await store.listBundles({}, FIRST)).rows;
  assert.equal(row!.json, bundleJson(added, packSignatures(sigs)));
  assert.equal(
    row!.json,
    '{"newSigner":"new\\"signer","submitter":"0xS\\n","nonce":"18446744073709551616","timestamp":"-3",' +
      '"signatures":"0x000001abcdefff","epochSeq":"18446744073709551615"}',
  );
  assert.deepEqual((await store.listBundles({ epochSeq: (1n << 64n) - 1n }, FIRST)).rows.length, 1, 'epochSeq beyond int64 still matches');
});
