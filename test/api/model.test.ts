/** The reference model must itself be right: checked here against hand-computed answers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PageRow } from '../../src/domain/page.js';
import {
  compareOrderKeys,
  createModelStore,
  orderJson,
  packSignatures,
  pageOf,
} from '../support/model.js';
import type { OrderKey } from '../../src/domain/order.js';
import { STATUS } from '../../src/domain/enums.js';
import { T0, hexId, makeBlock, makeOrder, makeSignature, makeSignerAdded } from './fixtures.js';

test('orderJson: field order, int64 strings, enum names, optional parts only when set', () => {
  const plain = makeOrder(1);
  assert.equal(
    orderJson(plain),
    `{"id":"${plain.id}","marketId":"${plain.marketId}","partyId":"${plain.partyId}","side":"SIDE_BUY",` +
      `"price":"1000","size":"10","remaining":"10","timeInForce":"TIME_IN_FORCE_GTC","type":"TYPE_LIMIT",` +
      `"createdAt":"${T0 + 1n}","status":"STATUS_ACTIVE","expiresAt":"0","reference":"ref-1","updatedAt":"0",` +
      `"version":"1","batchId":"0","liquidityProvisionId":"","postOnly":false,"reduceOnly":false}`,
  );
  const full = makeOrder(2, {
    reason: 0,
    peggedOrder: { reference: 3, offset: '-2' },
    icebergOrder: { peakSize: 1n, minimumVisibleSize: 2n, reservedRemaining: 3n },
    reference: 'quote"and\\slash',
  });
  assert.deepEqual(Object.keys(JSON.parse(orderJson(full))), [
    'id', 'marketId', 'partyId', 'side', 'price', 'size', 'remaining', 'timeInForce', 'type', 'createdAt',
    'status', 'expiresAt', 'reference', 'reason', 'updatedAt', 'version', 'batchId', 'peggedOrder',
    'liquidityProvisionId', 'postOnly', 'reduceOnly', 'icebergOrder',
  ]);
  const parsed = JSON.parse(orderJson(full));
  assert.equal(parsed.reason, 'ORDER_ERROR_UNSPECIFIED');
  assert.deepEqual(parsed.peggedOrder, { reference: 'PEGGED_REFERENCE_BEST_ASK', offset: '-2' });
  assert.equal(parsed.reference, 'quote"and\\slash');
  const unknown = JSON.parse(orderJson(makeOrder(3, { status: 99, reason: 38, side: 7 })));
  assert.equal(unknown.status, 99, 'an unknown enum number stays a JSON number');
  assert.equal(unknown.reason, 38);
  assert.equal(unknown.side, 7);
});

test('packSignatures: distinct, ascending bytes, 0x-prefixed; empty string for none', () => {
  assert.equal(packSignatures([]), '');
  assert.equal(packSignatures([Uint8Array.of(0xff), Uint8Array.of(0x00, 0x01), Uint8Array.of(0xff), Uint8Array.of(0x00)]), '0x000001ff');
});

test('orders: later block wins, the last event within a block wins, ids lowercased', async () => {
  const id = hexId('A', 1);
  const store = createModelStore([
    makeBlock(1, { orders: [makeOrder(1, { id, status: STATUS.ACTIVE }), makeOrder(1, { id, status: STATUS.PARKED })] }),
    makeBlock(2, { orders: [makeOrder(1, { id: id.toLowerCase(), status: STATUS.FILLED, version: 3n })] }),
    makeBlock(3, { orders: [makeOrder(2, { status: STATUS.ACTIVE })] }),
  ]);
  const page = await store.listOrders({}, { newestFirst: false, mode: 'first', limit: 10 });
  assert.deepEqual(page.rows.map((r) => [r.key.id, JSON.parse(r.json).status]), [
    [id.toLowerCase(), 'STATUS_FILLED'],
    [hexId('0', 2), 'STATUS_ACTIVE'],
  ]);
  const parked = await store.listOrders({ statuses: [STATUS.PARKED] }, { newestFirst: true, mode: 'first', limit: 10 });
  assert.deepEqual(parked.rows, [], 'an overwritten state no longer matches');
  assert.deepEqual(await store.lastBlock(), { height: 3n, time: makeBlock(3).time, chainId: 'test-chain' });
});

test('bundles: replaced by signature id, signatures from any block, filters', async () => {
  const sid = hexId('5', 1);
  const store = createModelStore([
    makeBlock(1, { nodeSignatures: [makeSignature(sid, [0x09])] }),
    makeBlock(2, { signersAdded: [makeSignerAdded(1, { nonce: 'a' }), makeSignerAdded(2, { validatorId: hexId('E', 9) })] }),
    makeBlock(3, { signersAdded: [makeSignerAdded(1, { nonce: 'b' })], nodeSignatures: [makeSignature(sid, [0x01])] }),
  ]);
  const all = await store.listBundles({}, { newestFirst: false, mode: 'first', limit: 10 });
  assert.deepEqual(all.rows.map((r) => JSON.parse(r.json)), [
    { newSigner: makeSignerAdded(1).newSigner, submitter: makeSignerAdded(1).submitter, nonce: 'b',
      timestamp: String(T0 + 1n), signatures: '0x0109', epochSeq: '7' },
    { newSigner: makeSignerAdded(2).newSigner, submitter: makeSignerAdded(2).submitter, nonce: '1002',
      timestamp: String(T0 + 2n), signatures: '', epochSeq: '7' },
  ]);
  const byNode = await store.listBundles({ nodeId: hexId('e', 9) }, { newestFirst: true, mode: 'first', limit: 10 });
  assert.deepEqual(byNode.rows.map((r) => r.key.signatureId), [hexId('5', 2)]);
  const byEpoch = await store.listBundles({ epochSeq: 8n }, { newestFirst: true, mode: 'first', limit: 10 });
  assert.deepEqual(byEpoch.rows, []);
});

/** Paging stated by index, independently of pageOf's cursor comparisons. */
test('pageOf agrees with index arithmetic for every cursor row, size and mode', () => {
  const rows: PageRow<OrderKey>[] = Array.from({ length: 9 }, (_, i) => ({
    json: String(i),
    // Pairs share a createdAt so the id decides.
    key: { createdAt: BigInt(Math.floor(i / 2)), id: hexId('0', i) },
  }));
  for (const newestFirst of [true, false]) {
    const list = newestFirst ? [...rows].reverse() : rows;
    for (let limit = 1; limit <= 10; limit++) {
      const noCursorFirst = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'first', limit });
      assert.deepEqual(noCursorFirst, { rows: list.slice(0, limit), hasNextPage: limit < 9, hasPreviousPage: false });
      const noCursorLast = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'last', limit });
      assert.deepEqual(noCursorLast, { rows: list.slice(Math.max(0, 9 - limit)), hasNextPage: false, hasPreviousPage: limit < 9 });
      for (let i = 0; i < 9; i++) {
        const cursor = list[i]!.key;
        const first = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'first', limit, cursor });
        assert.deepEqual(first, { rows: list.slice(i + 1, i + 1 + limit), hasNextPage: i + 1 + limit < 9, hasPreviousPage: true });
        const last = pageOf(rows, compareOrderKeys, { newestFirst, mode: 'last', limit, cursor });
        assert.deepEqual(last, { rows: list.slice(Math.max(0, i - limit), i), hasNextPage: true, hasPreviousPage: i - limit > 0 });
      }
    }
  }
});

test('pageOf with a cursor between rows or beyond the ends', () => {
  const rows: PageRow<OrderKey>[] = [10n, 20n, 30n].map((t, i) => ({ json: String(i), key: { createdAt: t, id: hexId('0', i) } }));
  const between = { createdAt: 15n, id: hexId('0', 0) };
  const asc = (mode: 'first' | 'last', cursor: OrderKey) => pageOf(rows, compareOrderKeys, { newestFirst: false, mode, limit: 5, cursor });
  assert.deepEqual(asc('first', between), { rows: rows.slice(1), hasNextPage: false, hasPreviousPage: true });
  assert.deepEqual(asc('last', between), { rows: rows.slice(0, 1), hasNextPage: true, hasPreviousPage: false });
  const beyond = { createdAt: 99n, id: hexId('0', 0) };
  assert.deepEqual(asc('first', beyond), { rows: [], hasNextPage: false, hasPreviousPage: true });
  assert.deepEqual(asc('last', beyond), { rows, hasNextPage: false, hasPreviousPage: false });
  const beforeAll = { createdAt: -1n, id: hexId('0', 0) };
  assert.deepEqual(asc('first', beforeAll), { rows, hasNextPage: false, hasPreviousPage: false });
  assert.deepEqual(asc('last', beforeAll), { rows: [], hasNextPage: true, hasPreviousPage: false });
});
