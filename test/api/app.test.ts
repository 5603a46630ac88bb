import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { buildApp } from '../../src/api/app.js';
import type { QueryStore } from '../../src/store/store.js';
import { createModelStore } from '../support/model.js';
import { assertErrorReply, get, makeBlock, makeOrder, serverOver } from './fixtures.js';

const manyOrders = Array.from({ length: 40 }, (_, i) => makeOrder(i + 1));

test('GET /health reports the last committed block', async () => {
  const { app } = await serverOver([makeBlock(1), makeBlock(2, { chainId: 'chain-x' })]);
  const reply = await get(app, '/health');
  assert.equal(reply.status, 200);
  assert.match(String(reply.headers['content-type']), /^application\/json/);
  assert.deepEqual(reply.json, {
    status: 'ok',
    lastBlock: { height: '2', time: String(makeBlock(2).time), chainId: 'chain-x' },
  });
  await app.close();
});

test('GET /health on an empty store', async () => {
  const { app } = await serverOver([]);
  assert.deepEqual((await get(app, '/health')).json, { status: 'ok', lastBlock: null });
  await app.close();
});

test('unknown routes are a 404, and methods that would write a 405, in the error body shape', async () => {
  const { app } = await serverOver([]);
  for (const url of ['/api/v2/nothing', '/', '/api/v2/orders/extra', '/api/v1/orders?pagination.first=1']) {
    assertErrorReply(await get(app, url), 404, 5, undefined);
  }
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    const refused = await app.inject({ method, url: '/api/v2/orders' });
    assert.equal(refused.statusCode, 405, method);
    assert.equal(JSON.parse(refused.body).code, 12, method);
    assert.equal(refused.headers.allow, 'GET, HEAD, OPTIONS', method);
  }
  await app.close();
});

test('malformed URLs get the error body too', async () => {
  const { app } = await serverOver([]);
  assertErrorReply(await get(app, '/api/v2/orders%zz'), 400, 3, undefined, '/api/v2/orders%zz');
  assertErrorReply(await get(app, '/api/v2/orders?filter.reference=%zz'), 400, 3, undefined, 'filter.reference=%zz');
  await app.close();
});

test('?pretty indents the same JSON, with or without a value', async () => {
  const { app } = await serverOver([makeBlock(1, { orders: manyOrders.slice(0, 3) })]);
  const plain = await get(app, '/api/v2/orders');
  assert.ok(!plain.body.includes('\n'));
  for (const qs of ['pretty', 'pretty=', 'pretty=true', 'pretty=0']) {
    const pretty = await get(app, `/api/v2/orders?${qs}`);
    assert.equal(pretty.status, 200);
    assert.match(String(pretty.headers['content-type']), /^application\/json/);
    assert.ok(pretty.body.startsWith('{\n  "orders": {\n'), pretty.body.slice(0, 40));
    assert.deepEqual(pretty.json, plain.json);
  }
  const bundles = await get(app, '/api/v2/erc20/multisigcontrol/signer/added/bundles?pretty');
  assert.equal(bundles.body, JSON.stringify(bundles.json, null, 2));
  await app.close();
});

test('gzip when the client accepts it, decoding to the same JSON', async () => {
  const { app } = await serverOver([makeBlock(1, { orders: manyOrders })]);
  const plain = await app.inject({ method: 'GET', url: '/api/v2/orders' });
  assert.equal(plain.headers['content-encoding'], undefined);
  const zipped = await app.inject({ method: 'GET', url: '/api/v2/orders', headers: { 'accept-encoding': 'gzip' } });
  assert.equal(zipped.statusCode, 200);
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.match(String(zipped.headers['content-type']), /^application\/json/);
  const body = gunzipSync(zipped.rawPayload).toString('utf8');
  assert.equal(body, plain.body);
  assert.ok(zipped.rawPayload.length < plain.rawPayload.length / 2);
  // A client preferring gzip among several gets gzip.
  const several = await app.inject({ method: 'GET', url: '/api/v2/orders', headers: { 'accept-encoding': 'gzip, deflate, br' } });
  assert.equal(several.headers['content-encoding'], 'gzip');
  await app.close();
});

test('a failing store is a 500 with a generic message; the cause is logged, not sent', async () => {
  const logged: string[] = [];
  const failing: QueryStore = {
    ...createModelStore([]),
    listOrders: async () => { throw new Error('SQLITE_CORRUPT: secret table detail at /var/data/x.db'); },
    listBundles: async () => { throw new TypeError('boom'); },
    lastBlock: async () => { throw new Error('disk gone'); },
  };
  const app = await buildApp({
    store: failing,
    logger: { level: 'error', stream: { write: (line: string) => { logged.push(line); } } },
  });
  for (const url of ['/api/v2/orders', '/api/v2/erc20/multisigcontrol/signer/added/bundles']) {
    const reply = await get(app, url);
    assertErrorReply(reply, 500, 13, undefined);
    assert.deepEqual(reply.json, { code: 13, message: 'internal error', details: [] });
    assert.ok(!reply.body.includes('SQLITE') && !reply.body.includes('stack') && !reply.body.includes('boom'));
  }
  // Health says the store cannot be read, by the kind of fault only (test/api/health.test.ts).
  const health = await get(app, '/health');
  assert.equal(health.status, 503);
  assert.ok(!health.body.includes('disk gone'));
  assert.ok(logged.some((line) => line.includes('SQLITE_CORRUPT')), 'the cause reaches the log');
  await app.close();
});

test('validation happens before the store is asked', async () => {
  const { app, store } = await serverOver([]);
  await get(app, '/api/v2/orders?filter.statuses=NOPE');
  await get(app, '/api/v2/erc20/multisigcontrol/signer/added/bundles?epochSeq=NOPE');
  assert.equal(store.orderCalls.length + store.bundleCalls.length, 0);
  await app.close();
});

test('the server listens on a real socket', async () => {
  const app = await buildApp({ store: createModelStore([makeBlock(1, { orders: manyOrders.slice(0, 2) })]) });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`${address}/api/v2/orders?pagination.first=1&filter.statuses=STATUS_ACTIVE`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await res.json()) as { orders: { edges: unknown[]; pageInfo: { hasNextPage: boolean } } };
    assert.equal(body.orders.edges.length, 1);
    assert.equal(body.orders.pageInfo.hasNextPage, true);
  } finally {
    await app.close();
  }
});
