/**
 * GET /api/v2/order/{orderId}, /api/v2/order/versions/{orderId} and the
 * signer-removed bundles over the model store: the original's answers and
 * refusals, in its order of checks (companions sheet, sections 1-3), through
 * Fastify (inject) and through the real server's fast path alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { SignerRemoved } from '../../src/domain/bundle.js';
import { T0, get, hexId, makeBlock, makeOrder, makeSignature, serverOver, type ErrorReply, type JsonReply } from './fixtures.js';

const A = hexId('0', 1);
const B = hexId('0', 2);
const UNKNOWN = hexId('0', 99);
const removal: SignerRemoved = {
  signatureSubmitters: [{ signatureId: hexId('5', 1), submitter: `0X${'AB'.repeat(20)}` }, { signatureId: hexId('5', 2), submitter: `0x${'cd'.repeat(20)}` }],
  validatorId: hexId('e', 1), timestamp: T0 + 1234n, oldSigner: `0x${'EF'.repeat(20)}`, nonce: 'n1', epochSeq: 7n,
};
const blocks = [
  makeBlock(1, { orders: [makeOrder(1, { version: 1n, remaining: 10n }), makeOrder(2)] }),
  makeBlock(2, { orders: [makeOrder(1, { version: 2n, remaining: 5n })] }),
  makeBlock(3, { orders: [makeOrder(1, { version: 3n, remaining: 0n })], signersRemoved: [removal], nodeSignatures: [makeSignature(hexId('5', 2), [0xbe, 0xef])] }),
];

let app: FastifyInstance;
let base: string;
before(async () => {
  ({ app } = await serverOver(blocks));
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
after(() => app.close());

/** The data node's own refusal: "<code name> error", one detail with its code, message and inner. */
function assertDataNodeError(reply: JsonReply, status: number, code: number, message: string, detail: number, detailMessage: string, inner = ''): void {
  assert.equal(reply.status, status, reply.body);
  assert.deepEqual(reply.json, {
    code, message, details: [{ '@type': 'type.googleapis.com/vega.ErrorDetail', code: detail, message: detailMessage, inner }],
  });
  assert.equal(reply.headers['x-block-height'], '3', 'the block headers');
}

const node = async (url: string) => ((await get(app, url)).json as { order: { id: string; version: string; remaining: string } }).order;

test('one order: its current state, or the last state of a version; upper-case ids answer in lower case', async () => {
  assert.deepEqual(await node(`/api/v2/order/${A}`), { ...(await node(`/api/v2/order/${A}?version=3`)) });
  assert.equal((await node(`/api/v2/order/${A}`)).remaining, '0');
  assert.equal((await node(`/api/v2/order/${A}?version=1`)).remaining, '10');
  assert.equal((await node(`/api/v2/order/${A}?version=%2B2`)).remaining, '5');
  assert.equal((await node(`/api/v2/order/${A.toUpperCase()}`)).id, A);
  // The original's gateway lets the field's JSON name in the query replace the path's id; here the path wins.
  assert.equal((await node(`/api/v2/order/${A}?orderId=${B}`)).id, A);
  assert.equal((await node(`/api/v2/order/${A}?order_id=${B}`)).id, A);
  const reply = await get(app, `/api/v2/order/${A}`);
  assert.deepEqual(Object.keys(reply.json as object), ['order']);
  assert.equal(reply.headers['x-block-height'], '3');
});

test('one order: the original\'s refusals, gateway first, then the id, then the version', async () => {
  const invalid = (r: JsonReply) => assertDataNodeError(r, 400, 3, 'InvalidArgument error', 10000, 'invalid orderID parameter');
  assertDataNodeError(await get(app, '/api/v2/order/'), 400, 3, 'InvalidArgument error', 10012, 'missing orderID parameter');
  invalid(await get(app, '/api/v2/order/abc'));
  invalid(await get(app, `/api/v2/order/${A}0`));
  invalid(await get(app, `/api/v2/order/${'g'.repeat(64)}`));
  // No route: /order/versions without its slash is an order id, "versions".
  invalid(await get(app, '/api/v2/order/versions'));
  for (const v of ['0', '-1']) {
    assertDataNodeError(await get(app, `/api/v2/order/${A}?version=${v}`), 400, 3, 'InvalidArgument error', 10000, 'negative order version');
  }
  assertDataNodeError(await get(app, `/api/v2/order/${UNKNOWN}`), 404, 5, 'NotFound error', 20006, 'order not found',
    `orderID: ${UNKNOWN}: no resource corresponding to this id`);
  assertDataNodeError(await get(app, `/api/v2/order/${A}?version=4`), 404, 5, 'NotFound error', 20006, 'order not found',
    `orderID: ${A}: no resource corresponding to this id`);
  const gateway = async (url: string, message: string) => {
    const reply = await get(app, url);
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.json as ErrorReply, { code: 3, message, details: [] });
  };
  await gateway(`/api/v2/order/${A}?version=x`, 'parsing field "version": strconv.ParseInt: parsing "x": invalid syntax');
  await gateway(`/api/v2/order/${A}?version=2147483648`, 'parsing field "version": strconv.ParseInt: parsing "2147483648": value out of range');
  await gateway(`/api/v2/order/${A}?version=1&version=2`, 'too many values for field "version": 1, 2');
  // The version is the gateway's to parse: refused before the id is looked at.
  await gateway('/api/v2/order/abc?version=x', 'parsing field "version": strconv.ParseInt: parsing "x": invalid syntax');
  assert.equal((await get(app, `/api/v2/order/${A}/more`)).status, 404);
});

test('versions: highest first, each in its last state; oldest first reverses; pages both ways; an unknown order is an empty page', async () => {
  const versions = async (query: string) => {
    const reply = await get(app, `/api/v2/order/versions/${A}${query}`);
    assert.equal(reply.status, 200, reply.body);
    return reply.json as { orders: { edges: { node: { version: string; remaining: string }; cursor: string }[]; pageInfo: Record<string, unknown> } };
  };
  const all = await versions('');
  assert.deepEqual(all.orders.edges.map((e) => [e.node.version, e.node.remaining]), [['3', '0'], ['2', '5'], ['1', '10']]);
  assert.deepEqual((await versions('?pagination.newestFirst=false')).orders.edges.map((e) => e.node.version), ['1', '2', '3']);
  const first = await versions('?pagination.first=1');
  assert.deepEqual(first.orders.edges.map((e) => e.node.version), ['3']);
  assert.equal(first.orders.pageInfo.hasNextPage, true);
  const next = await versions(`?pagination.first=1&pagination.after=${first.orders.edges[0]!.cursor}`);
  assert.deepEqual(next.orders.edges.map((e) => e.node.version), ['2']);
  assert.deepEqual([next.orders.pageInfo.hasNextPage, next.orders.pageInfo.hasPreviousPage], [true, true]);
  const last = await versions('?pagination.last=2');
  assert.deepEqual(last.orders.edges.map((e) => e.node.version), ['2', '1']);
  assert.deepEqual([last.orders.pageInfo.hasNextPage, last.orders.pageInfo.hasPreviousPage], [false, true]);

  const none = await get(app, `/api/v2/order/versions/${UNKNOWN}`);
  assert.equal(none.body, '{"orders":{"edges":[],"pageInfo":{"hasNextPage":false,"hasPreviousPage":false,"startCursor":"","endCursor":""}}}');
  assertDataNodeError(await get(app, '/api/v2/order/versions/'), 400, 3, 'InvalidArgument error', 10012, 'missing orderID parameter');
  // The id is checked before the pagination, as the original's handler checks them.
  assertDataNodeError(await get(app, '/api/v2/order/versions/abc?pagination.first=0'), 400, 3, 'InvalidArgument error', 10000, 'invalid orderID parameter');
  assert.equal((await get(app, `/api/v2/order/versions/${A}?pagination.first=0`)).status, 400);
  // A cursor of another order's versions, or of another listing, points nowhere here.
  const ofB = (await get(app, `/api/v2/order/versions/${B}`)).json as typeof all;
  assert.equal((await get(app, `/api/v2/order/versions/${A}?pagination.after=${ofB.orders.edges[0]!.cursor}`)).status, 400);
  const listCursor = ((await get(app, '/api/v2/orders')).json as typeof all).orders.edges[0]!.cursor;
  assert.equal((await get(app, `/api/v2/order/versions/${A}?pagination.after=${listCursor}`)).status, 400);
});

test('removed bundles: one per signature submitter, the original\'s fields, filters and refusals', async () => {
  const reply = await get(app, '/api/v2/erc20/multisigcontrol/signer/removed/bundles');
  assert.equal(reply.status, 200);
  const nodes = (reply.json as { bundles: { edges: { node: Record<string, string> }[] } }).bundles.edges.map((e) => e.node);
  const shared = { oldSigner: `0x${'ef'.repeat(20)}`, nonce: 'n1', timestamp: String(T0 + 1000n), epochSeq: '7' };
  assert.deepEqual(nodes, [
    { oldSigner: shared.oldSigner, submitter: `0x${'cd'.repeat(20)}`, nonce: 'n1', timestamp: shared.timestamp, signatures: '0xbeef', epochSeq: '7' },
    { oldSigner: shared.oldSigner, submitter: `0x${'ab'.repeat(20)}`, nonce: 'n1', timestamp: shared.timestamp, signatures: '', epochSeq: '7' },
  ]);
  const count = async (query: string) =>
    ((await get(app, `/api/v2/erc20/multisigcontrol/signer/removed/bundles?${query}`)).json as { bundles: { edges: unknown[] } }).bundles.edges.length;
  assert.equal(await count(`submitter=0x${'AB'.repeat(20)}`), 1);
  assert.equal(await count(`nodeId=${hexId('e', 1)}&epochSeq=7`), 2);
  assert.equal(await count('epoch_seq=8'), 0);
  assert.equal((await get(app, '/api/v2/erc20/multisigcontrol/signer/removed/bundles?epochSeq=x')).status, 400);
  // An added-bundle cursor is not one of this listing.
  const added = await get(app, '/api/v2/erc20/multisigcontrol/signer/added/bundles');
  assert.equal(added.status, 200);
});

test('the fast path answers the companions with the bytes Fastify sends, cached per block', async () => {
  for (const path of [`/api/v2/order/${A}?version=2`, `/api/v2/order/versions/${A}?pagination.first=2`, '/api/v2/erc20/multisigcontrol/signer/removed/bundles']) {
    const viaFastify = await get(app, path);
    const viaServer = await fetch(`${base}${path}`);
    const body = await viaServer.text();
    assert.equal(viaServer.status, 200, path);
    assert.equal(body, viaFastify.body, path);
    assert.equal(viaServer.headers.get('etag'), viaFastify.headers.etag, path);
    const again = await fetch(`${base}${path}`, { headers: { 'if-none-match': viaServer.headers.get('etag')! } });
    assert.equal(again.status, 304, path);
  }
  const refused = await fetch(`${base}/api/v2/order/${UNKNOWN}`);
  assert.equal(refused.status, 404);
  assert.equal(refused.headers.get('x-block-height'), '3');
});
