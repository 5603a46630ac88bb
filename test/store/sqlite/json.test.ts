/** The JSON SQLite emits for order and bundle nodes (docs/compatibility.md, section 3): key order, escaping, enum names, optional and null members. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Order } from '../../../src/domain/order.js';
import { bundleJson, orderJson, packSignatures } from '../../support/model.js';
import { orderIdOfNode } from '../../../src/store/node-json.js';
import { block, hex, order, tempStore } from '../helpers.js';
import { writeBlocks } from '../../../src/store/store.js';

const FIRST: { newestFirst: boolean; mode: 'first'; limit: number } = { newestFirst: false, mode: 'first', limit: 100 };

async function storedJson(orders: Order[], t: Parameters<typeof tempStore>[0]): Promise<string[]> {
  const { store, writer } = await tempStore(t);
  await writeBlocks(writer, [block(1, { orders })]);
  return (await store.listOrders({}, FIRST)).rows.map((r) => r.json);
}

test('an order node has every field in the original order, 64-bit values as strings, enums as names, times in whole microseconds', async (t) => {
  const [json] = await storedJson([order(1, {
    side: 2, price: '123456789012345678901234567890', createdAt: 1678444076736102285n, updatedAt: 999n, expiresAt: -1500n,
    version: 3n, batchId: 4n, postOnly: true,
  })], t);
  assert.equal(
    json,
    `{"id":"${hex(1)}","marketId":"${hex(1001)}","partyId":"${hex(2001)}","side":"SIDE_SELL",` +
      `"price":"123456789012345678901234567890","size":"10","remaining":"10","timeInForce":"TIME_IN_FORCE_GTC",` +
      `"type":"TYPE_LIMIT","createdAt":"1678444076736102000","status":"STATUS_ACTIVE","expiresAt":"-2000","reference":"",` +
      `"updatedAt":"0","version":"3","batchId":"4","peggedOrder":null,"liquidityProvisionId":"","postOnly":true,"reduceOnly":false}`,
  );
});

const KEYS = [
  'id', 'marketId', 'partyId', 'side', 'price', 'size', 'remaining', 'timeInForce', 'type', 'createdAt', 'status',
  'expiresAt', 'reference', 'reason', 'updatedAt', 'version', 'batchId', 'peggedOrder', 'liquidityProvisionId',
  'postOnly', 'reduceOnly', 'icebergOrder',
];

test('reason is left out when unset or 0, peggedOrder is null when unset or unreferenced, icebergOrder only when set', async (t) => {
  const set = order(1, {
    status: 6, reason: 14,
    peggedOrder: { reference: 3, offset: '-5' },
    icebergOrder: { peakSize: 1n, minimumVisibleSize: 2n, reservedRemaining: 3n },
  });
  const zero = order(2, { reason: 0, peggedOrder: { reference: 0, offset: '7' } });
  const unset = order(3);
  const nodes = (await storedJson([set, zero, unset], t)).map((json) => JSON.parse(json) as Record<string, unknown>);
  const [s, z, u] = nodes as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
  assert.deepEqual(Object.keys(s), KEYS);
  assert.equal(s.reason, 'ORDER_ERROR_MARGIN_CHECK_FAILED');
  assert.deepEqual(s.peggedOrder, { reference: 'PEGGED_REFERENCE_BEST_ASK', offset: '-5' });
  assert.deepEqual(s.icebergOrder, { peakSize: '1', minimumVisibleSize: '2', reservedRemaining: '3' });
  const without = KEYS.filter((k) => k !== 'reason' && k !== 'icebergOrder');
  assert.deepEqual(Object.keys(z), without, 'a reason set to 0 is left out, as the original leaves it out');
  assert.equal(z.peggedOrder, null, 'a pegged order whose reference is unspecified is no pegged order');
  assert.deepEqual(Object.keys(u), without);
  assert.equal(u.peggedOrder, null);
});

test('a page key takes the order id from the node, where it is the first member', async (t) => {
  const { store, writer } = await tempStore(t);
  const orders = [order(0xabc, { id: hex(0xabc).toUpperCase() }), order(2), order(3, { reference: '{"id":"x' })];
  await writeBlocks(writer, [block(1, { orders })]);
  const page = await store.listOrders({}, FIRST);
  assert.equal(page.rows.length, 3);
  for (const row of page.rows) {
    assert.equal(orderIdOfNode(row.json), (JSON.parse(row.json) as { id: string }).id);
    assert.equal(row.key.id, orderIdOfNode(row.json));
  }
});

test('ids are printed in lower case whatever case the event used', async (t) => {
  const [json] = await storedJson([order(1, {
    id: hex(0xabc).toUpperCase(), marketId: hex(0xdef).toUpperCase(), partyId: hex(0xfed).toUpperCase(),
    liquidityProvisionId: hex(0xcafe).toUpperCase(),
  })], t);
  const node = JSON.parse(json!) as Record<string, unknown>;
  assert.deepEqual([node.id, node.marketId, node.partyId, node.liquidityProvisionId], [hex(0xabc), hex(0xdef), hex(0xfed), hex(0xcafe)]);
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

test('a bundle node: fields in order, escaped strings, addresses "0x" + lower case, time in whole microseconds, signatures packed in byte order', async (t) => {
  const { store, writer } = await tempStore(t);
  const added = { signatureId: 'ab', validatorId: 'v', timestamp: -3n, newSigner: 'new"signer', submitter: '0XS\n', nonce: '18446744073709551616', epochSeq: (1n << 64n) - 1n };
  const sigs = [Uint8Array.from([0xff]), Uint8Array.from([0x00, 0x01]), Uint8Array.from([0x00]), Uint8Array.from([0xab, 0xcd, 0xef])];
  await writeBlocks(writer, [block(1, { signersAdded: [added], nodeSignatures: sigs.map((sig) => ({ id: 'AB', sig, kind: 3 })) })]);
  const [row] = (await store.listBundles({}, FIRST)).rows;
  assert.equal(row!.json, bundleJson(added, packSignatures(sigs)));
  assert.equal(
    row!.json,
    '{"newSigner":"0xnew\\"signer","submitter":"0xs\\n","nonce":"18446744073709551616","timestamp":"-1000",' +
      '"signatures":"0x000001abcdefff","epochSeq":"18446744073709551615"}',
  );
  assert.deepEqual((await store.listBundles({ epochSeq: (1n << 64n) - 1n }, FIRST)).rows.length, 1, 'epochSeq beyond int64 still matches');
});
