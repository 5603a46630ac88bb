/**
 * Answers cached per block: served from memory while no block commits, never
 * older than the last committed block, keyed so that two different queries
 * never share an answer; ETags and 304s; compressed variants.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { AnswerCache } from '../../src/api/answer-cache.js';
import { buildApp } from '../../src/api/app.js';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { writeBlocks, type QueryStore } from '../../src/store/store.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import type { SqliteWriter } from '../../src/store/sqlite/writer.js';
import { block, hex, order, random, tempStore } from '../store/helpers.js';
import { WITHOUT_COMPANIONS } from '../support/without-companions.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

/** The store, counting the page reads that reach it. */
function counted(store: QueryStore): { store: QueryStore; reads: () => number } {
  let reads = 0;
  const wrapped: QueryStore = { ...WITHOUT_COMPANIONS,
    listOrders: (f, p) => (reads++, store.listOrders(f, p)),
    listBundles: (f, p) => (reads++, store.listBundles(f, p)),
    lastBlock: () => store.lastBlock(),
    close: () => store.close(),
  };
  return { store: wrapped, reads: () => reads };
}

/** Orders 1..n over `blocks` blocks, in two markets, some filled. */
function book(n: number, blocks: number): ReturnType<typeof block>[] {
  const rnd = random(7);
  const out = [];
  for (let h = 1, k = 1; h <= blocks; h++) {
    const orders: Order[] = [];
    for (; k <= (n * h) / blocks; k++) {
      orders.push(order(k, {
        marketId: hex(1000 + (k % 2)),
        status: rnd() < 0.3 ? STATUS.FILLED : STATUS.ACTIVE,
        type: rnd() < 0.1 ? TYPE.NETWORK : TYPE.LIMIT,
        timeInForce: rnd() < 0.2 ? TIF.IOC : TIF.GTC,
        reference: rnd() < 0.3 ? `ref-${k % 5}` : '',
      }));
    }
    out.push(block(h, { orders }));
  }
  return out;
}

async function setup(t: TestContext, cacheBytes = 1 << 20): Promise<{ sqlite: SqliteStore; writer: SqliteWriter; app: FastifyInstance; reads: () => number }> {
  const { store: sqlite, writer } = await tempStore(t);
  await writeBlocks(writer, book(60, 3));
  const { store, reads } = counted(sqlite);
  const app = await buildApp({ store, answerCacheBytes: cacheBytes });
  t.after(() => app.close());
  return { sqlite, writer, app, reads };
}

test('the same page again is served from memory until a block commits; then the next request sees the block', async (t) => {
  const { sqlite, app, reads, writer } = await setup(t);
  const url = `${ORDERS}?pagination.first=5`;
  const a = await app.inject({ url });
  const b = await app.inject({ url });
  assert.equal(reads(), 1, 'the second request was not read from the store');
  assert.equal(b.body, a.body);
  assert.equal(b.headers['x-block-height'], '3');
  assert.equal(b.headers.etag, a.headers.etag);

  await writeBlocks(writer, [block(4, { orders: [order(500)] })]);
  const c = await app.inject({ url });
  assert.equal(reads(), 2, 'a committed block makes the next request read the store');
  assert.equal(c.headers['x-block-height'], '4');
  assert.equal(JSON.parse(c.body).orders.edges[0].node.id, hex(500), 'the new order is there');
  assert.notEqual(c.headers.etag, a.headers.etag);
});

test('spellings of one query share an answer: snake_case, key order, list order and repeats, defaults given', async (t) => {
  const { app, reads } = await setup(t);
  const urls = [
    `${ORDERS}?filter.statuses=STATUS_ACTIVE&filter.statuses=STATUS_FILLED&pagination.first=4`,
    `${ORDERS}?pagination.first=4&filter.statuses=STATUS_FILLED&filter.statuses=STATUS_ACTIVE`,
    `${ORDERS}?filter.statuses=STATUS_FILLED&filter.statuses=STATUS_ACTIVE&filter.statuses=STATUS_FILLED&pagination.first=4`,
    `${ORDERS}?filter.statuses=STATUS_ACTIVE&filter.statuses=STATUS_FILLED&pagination.first=4&pagination.new_est_first=true`.replace('new_est_first', 'newest_first'),
    `${ORDERS}?filter.statuses=STATUS_ACTIVE&filter.statuses=STATUS_FILLED&pagination.first=4&filter.live_only=false&filter.excludeLiquidity=false`,
  ];
  const bodies = [];
  for (const url of urls) bodies.push((await app.inject({ url })).body);
  assert.equal(reads(), 1, 'one read for all spellings');
  for (const body of bodies) assert.equal(body, bodies[0]);
});

test('ETag and If-None-Match: 304 only while the answer is unchanged, with the current block headers', async (t) => {
  const { sqlite, app, writer } = await setup(t);
  const url = `${ORDERS}?filter.marketIds=${hex(1000)}&pagination.first=3`;
  const first = await app.inject({ url });
  const etag = first.headers.etag as string;
  assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
  const same = await app.inject({ url, headers: { 'if-none-match': etag } });
  assert.equal(same.statusCode, 304);
  assert.equal(same.body, '');
  assert.equal(same.headers['x-block-height'], '3');

  // A block that leaves this answer as it was (an order of the other market): still 304, naming the new block.
  await writeBlocks(writer, [block(4, { orders: [order(501, { marketId: hex(1001) })] })]);
  const still = await app.inject({ url, headers: { 'if-none-match': `W/${etag}, "other"` } });
  assert.equal(still.statusCode, 304);
  assert.equal(still.headers['x-block-height'], '4');

  // A block that changes it: the whole new answer.
  await writeBlocks(writer, [block(5, { orders: [order(502, { marketId: hex(1000) })] })]);
  const changed = await app.inject({ url, headers: { 'if-none-match': etag } });
  assert.equal(changed.statusCode, 200);
  assert.notEqual(changed.headers.etag, etag);
  assert.equal(JSON.parse(changed.body).orders.edges[0].node.id, hex(502));
});

test('compressed answers are kept beside the plain one and decode to it', async (t) => {
  const { app, reads } = await setup(t);
  const url = `${ORDERS}?pagination.first=40`;
  const plain = await app.inject({ url });
  const zipped = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate' } });
  const again = await app.inject({ url, headers: { 'accept-encoding': 'gzip' } });
  assert.equal(reads(), 1);
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.equal(zipped.headers['content-type'], plain.headers['content-type']);
  assert.equal(gunzipSync(zipped.rawPayload).toString(), plain.body);
  assert.deepEqual(again.rawPayload, zipped.rawPayload);
  const br = await app.inject({ url, headers: { 'accept-encoding': 'br' } });
  assert.equal(br.headers['content-encoding'], 'br');
});

test('errors are never cached, and the bundles endpoint is cached too', async (t) => {
  const { app, reads } = await setup(t);
  for (let i = 0; i < 2; i++) assert.equal((await app.inject({ url: `${ORDERS}?pagination.first=0` })).statusCode, 400);
  await app.inject({ url: BUNDLES });
  await app.inject({ url: `${BUNDLES}?pagination.newest_first=true` });
  assert.equal(reads(), 1);
});

test('the cache is bounded in bytes and empties when the block changes', () => {
  const cache = new AnswerCache(4000);
  const answer = (block: string, n: number) => ({ block, lastBlock: undefined, identity: Buffer.alloc(n, 'x'), etag: '"e"', encoded: new Map<string, Buffer>(), heads: new Map() });
  assert.equal(cache.get('a', '1:1'), undefined);
  for (const key of ['a', 'b', 'c']) cache.set(key, answer('1:1', 1000));
  assert.ok(cache.get('a', '1:1'), 'a kept');
  cache.set('d', answer('1:1', 1000));
  assert.ok(cache.size.bytes <= 4000);
  assert.equal(cache.get('b', '1:1'), undefined, 'b, least recently used, went first');
  assert.ok(cache.get('a', '1:1'));
  cache.set('e', answer('2:2', 10));
  assert.equal(cache.get('e', '1:1'), undefined, 'an answer read at another block is not kept');
  assert.equal(cache.get('a', '2:2'), undefined, 'a new block empties the cache');
  assert.equal(cache.size.entries, 0);
});

test('property: with the cache, every answer is byte for byte the answer without it (no two queries share one)', async (t) => {
  const { sqlite } = await setup(t);
  const cached = await buildApp({ store: sqlite });
  const uncached = await buildApp({ store: sqlite, answerCacheBytes: 0 });
  t.after(() => Promise.all([cached.close(), uncached.close()]));
  const name = (camel: string, snake: boolean) => (snake ? camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : camel);
  const param = fc.oneof(
    fc.constantFrom('STATUS_ACTIVE', 'STATUS_FILLED', 'STATUS_CANCELLED').map((v) => ['filter.statuses', v]),
    fc.constantFrom('TYPE_LIMIT', 'TYPE_NETWORK').map((v) => ['filter.types', v]),
    fc.constantFrom('TIME_IN_FORCE_GTC', 'TIME_IN_FORCE_IOC').map((v) => ['filter.timeInForces', v]),
    fc.constantFrom(hex(1000), hex(1001)).map((v) => ['filter.marketIds', v]),
    fc.constantFrom(hex(2000), hex(2001), hex(2002)).map((v) => ['filter.partyIds', v]),
    fc.constantFrom('ref-1', 'ref-2', '').map((v) => ['filter.reference', v]),
    fc.boolean().map((v) => ['filter.liveOnly', String(v)]),
    fc.boolean().map((v) => ['filter.excludeLiquidity', String(v)]),
    fc.boolean().map((v) => ['pagination.newestFirst', String(v)]),
    fc.integer({ min: 1, max: 6 }).map((v) => ['pagination.first', String(v)]),
  );
  const query = fc.record({
    params: fc.array(param, { maxLength: 6 }),
    snake: fc.boolean(),
    pretty: fc.boolean(),
    bundles: fc.boolean(),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(query, { minLength: 1, maxLength: 8 }), async (queries) => {
      for (const q of queries) {
        const params = new URLSearchParams(q.params.map(([k, v]): [string, string] => [name(k!, q.snake), v!]));
        if (q.pretty) params.set('pretty', '');
        const url = `${q.bundles ? BUNDLES : ORDERS}?${params}`;
        const [a, b] = await Promise.all([cached.inject({ url }), uncached.inject({ url })]);
        assert.equal(a.statusCode, b.statusCode, url);
        assert.equal(a.body, b.body, url);
        assert.equal(a.headers.etag, b.headers.etag, url);
      }
    }),
    { numRuns: 200, seed: 20261123 },
  );
});
