/**
 * The fast path (src/api/fast-path.ts) over real HTTP: a page request is
 * answered before Fastify, computed or kept, with the status, headers and
 * bytes of the full path (every request through Fastify), never older than
 * the last committed block, and never a request the full path would answer
 * otherwise.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { InternalApiError } from '../../src/api/errors.js';
import { QueryTimeoutError } from '../../src/errors.js';
import { buildApp } from '../../src/api/app.js';
import { STATUS } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { writeBlocks, type QueryStore } from '../../src/store/store.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import type { SqliteWriter } from '../../src/store/sqlite/writer.js';
import { block, hex, order, tempStore } from '../store/helpers.js';
import { WITHOUT_COMPANIONS } from '../support/without-companions.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

interface Answer {
  status: number;
  /** Raw header lines but Date, in the order and case sent. */
  headers: string[];
  body: Buffer;
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i]!.toLowerCase() !== 'date') lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        }
        resolve({ status: res.statusCode!, headers: lines, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Header lines as a sorted set: the two paths may write them in another order. */
const headerSet = (a: Answer) => [...a.headers].sort();

/** The store's reads, counted. */
function counting(store: SqliteStore): { store: QueryStore; lastBlockReads: () => number; pageReads: () => number } {
  let lastBlockReads = 0;
  let pageReads = 0;
  const wrapped: QueryStore = { ...WITHOUT_COMPANIONS,
    listOrders: (f, p) => (pageReads++, store.listOrders(f, p)),
    listBundles: (f, p) => (pageReads++, store.listBundles(f, p)),
    lastBlock: () => (lastBlockReads++, store.lastBlock()),
    close: () => store.close(),
  };
  return { store: wrapped, lastBlockReads: () => lastBlockReads, pageReads: () => pageReads };
}

interface Served {
  port: number;
  /** Requests Fastify has seen. */
  viaFastify: () => number;
}

async function listen(t: TestContext, store: QueryStore, logRequests: boolean): Promise<Served> {
  const app = await buildApp({ store, logRequests });
  let fastifyRequests = 0;
  app.addHook('onRequest', async () => void fastifyRequests++);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { port: (app.server.address() as AddressInfo).port, viaFastify: () => fastifyRequests };
}

async function filledStore(t: TestContext): Promise<{ store: SqliteStore; writer: SqliteWriter }> {
  const { store, writer } = await tempStore(t);
  const orders: Order[] = [];
  for (let k = 1; k <= 80; k++) orders.push(order(k, { status: k % 3 === 0 ? STATUS.FILLED : STATUS.ACTIVE, reference: `ref-${k % 4}` }));
  await writeBlocks(writer, [block(1, { orders: orders.slice(0, 40) }), block(2, { orders: orders.slice(40) })]);
  return { store, writer };
}

/** A server with the fast path, over a store whose reads are counted. */
async function serve(t: TestContext, logRequests = false) {
  const { store, writer } = await filledStore(t);
  const { store: countedStore, ...reads } = counting(store);
  return { store, writer, ...reads, ...await listen(t, countedStore, logRequests) };
}

const CASES: { name: string; path: string; headers?: Record<string, string> }[] = [
  { name: 'identity', path: `${ORDERS}?pagination.first=30` },
  { name: 'gzip', path: `${ORDERS}?pagination.first=30`, headers: { 'accept-encoding': 'gzip' } },
  { name: 'br preferred', path: `${ORDERS}?pagination.first=30`, headers: { 'accept-encoding': 'br;q=1, gzip;q=0.5' } },
  { name: 'deflate', path: `${ORDERS}?filter.statuses=STATUS_FILLED`, headers: { 'accept-encoding': 'deflate' } },
  { name: 'a coding nobody offers', path: `${ORDERS}?pagination.first=30`, headers: { 'accept-encoding': 'zstd' } },
  { name: 'short body, gzip asked', path: `${ORDERS}?filter.reference=none`, headers: { 'accept-encoding': 'gzip' } },
  { name: 'pretty', path: `${ORDERS}?pagination.first=2&pretty=true` },
  { name: 'backward, oldest first', path: `${ORDERS}?pagination.last=5&pagination.newest_first=false` },
  { name: 'no parameters', path: ORDERS },
  { name: 'bundles', path: `${BUNDLES}?pagination.first=5` },
];

test('a page request is answered before Fastify, computed and then kept, with the full path\'s status, headers and bytes', async (t) => {
  const { store } = await filledStore(t);
  const full = await listen(t, store, true);
  for (const c of CASES) {
    // A server each: its first request of the case is a miss.
    const fast = await listen(t, store, false);
    const expected = await get(full.port, c.path, c.headers);
    assert.equal(expected.status, 200, c.name);
    const computed = await get(fast.port, c.path, c.headers);
    const kept = await get(fast.port, c.path, c.headers);
    assert.equal(fast.viaFastify(), 0, `${c.name}: neither request went through Fastify`);
    for (const [what, answer] of [['computed', computed], ['kept', kept]] as const) {
      assert.equal(answer.status, expected.status, `${c.name}, ${what}`);
      assert.deepEqual(headerSet(answer), headerSet(expected), `${c.name}, ${what}`);
      assert.ok(answer.body.equals(expected.body), `${c.name}, ${what}: same bytes`);
    }
  }
});

test('If-None-Match on the fast path: 304 with the full path\'s headers while unchanged, the new answer after a block', async (t) => {
  const { store, writer, port, viaFastify } = await serve(t);
  const full = await listen(t, store, true);
  const path = `${ORDERS}?pagination.first=10`;
  const first = await get(port, path);
  const etag = first.headers.find((h) => h.startsWith('etag: '))!.slice(6);
  const full304 = await get(full.port, path, { 'if-none-match': etag });
  const fast304 = await get(port, path, { 'if-none-match': etag });
  assert.equal(full304.status, 304);
  assert.equal(fast304.status, 304);
  assert.equal(fast304.body.length, 0);
  assert.deepEqual(headerSet(fast304), headerSet(full304));

  await writeBlocks(writer, [block(3, { orders: [order(500)] })]);
  const after = await get(port, path, { 'if-none-match': etag });
  assert.equal(after.status, 200, 'a committed block changes the answer');
  assert.ok(after.headers.includes('X-Block-Height: 3'), 'the new block, named with the original case');
  assert.equal(JSON.parse(after.body.toString()).orders.edges[0].node.id, hex(500));
  const again = await get(port, path);
  assert.ok(again.body.equals(after.body));
  assert.equal(viaFastify(), 0);
});

test('a page is read once per block: a request reads the last block, a miss the page too', async (t) => {
  const { writer, port, lastBlockReads: allReads, pageReads } = await serve(t);
  // Once as it starts, for the headers of the refusals that cannot wait for the store (src/api/known-block.ts).
  const atStart = allReads();
  assert.equal(atStart, 1, 'the server read the last block as it started');
  const lastBlockReads = () => allReads() - atStart;
  const path = `${ORDERS}?pagination.first=10`;
  await get(port, path);
  assert.deepEqual([lastBlockReads(), pageReads()], [1, 1], 'a new URL');
  await get(port, `${ORDERS}?pagination.newest_first=true&pagination.first=10`);
  assert.deepEqual([lastBlockReads(), pageReads()], [2, 1], 'another spelling of the same query is a hit');
  await get(port, path, { 'accept-encoding': 'gzip' });
  assert.deepEqual([lastBlockReads(), pageReads()], [3, 1], 'so is another coding');
  await writeBlocks(writer, [block(3, { orders: [order(500)] })]);
  const after = await get(port, path);
  assert.deepEqual([lastBlockReads(), pageReads()], [4, 2], 'a new block: the page is read again');
  assert.ok(after.headers.includes('X-Block-Height: 3'));
});

test('what the full path refuses or cannot route never goes the fast way', async (t) => {
  const { port, viaFastify } = await serve(t);
  const bad = `${ORDERS}?pagination.first=nope`;
  for (let i = 1; i <= 3; i++) {
    const answer = await get(port, bad);
    assert.equal(answer.status, 400);
    assert.match(answer.body.toString(), /pagination\.first/);
    assert.equal(viaFastify(), i);
  }
  const post = await new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: `${ORDERS}?pagination.first=30`, method: 'POST' }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(post, 405, 'a POST is the full path\'s to refuse');
  assert.equal((await get(port, `${ORDERS}/?pagination.first=30`)).status, 404, 'a path that is not the endpoint\'s');
  assert.equal((await get(port, `${ORDERS}?pagination.first=30`)).status, 200);
  assert.equal(viaFastify(), 5);
});

test('a store that fails: the request goes on to Fastify, which says so with the error body', async (t) => {
  const { store } = await filledStore(t);
  const failing: QueryStore = { ...WITHOUT_COMPANIONS,
    listOrders: () => Promise.reject(new Error('disk on fire')),
    listBundles: (f, p) => store.listBundles(f, p),
    lastBlock: () => store.lastBlock(),
    close: () => store.close(),
  };
  const { port, viaFastify } = await listen(t, failing, false);
  const answer = await get(port, `${ORDERS}?pagination.first=5`);
  assert.equal(answer.status, 500);
  assert.equal(JSON.parse(answer.body.toString()).message, new InternalApiError('internal error').message);
  assert.equal(viaFastify(), 1);
  assert.equal((await get(port, `${BUNDLES}?pagination.first=5`)).status, 200);
  assert.equal(viaFastify(), 1);
});

test('with every request logged, every request goes through Fastify', async (t) => {
  const { port, viaFastify } = await serve(t, true);
  for (let i = 1; i <= 3; i++) await get(port, `${ORDERS}?pagination.first=5`);
  assert.equal(viaFastify(), 3);
});

/** The bytes the heap holds once the collector has run. */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

test('the URLs the fast path remembers stay within their bytes, however many and long they are', async (t) => {
  const { store } = await filledStore(t);
  const { port } = await listen(t, store, false);
  const pad = 'x'.repeat(12_000);
  // Warm up (Fastify, the cache's one answer), then 2,000 distinct 12 KB URLs of one answer: 24 MB of URLs.
  for (let i = 0; i < 20; i++) await get(port, `${ORDERS}?pagination.first=1&warm=${i}`);
  const before = heapAfterGc();
  for (let i = 0; i < 2000; i++) assert.equal((await get(port, `${ORDERS}?pagination.first=1&unused=${i}${pad}`)).status, 200);
  const grown = heapAfterGc() - before;
  assert.ok(grown < 10 << 20, `the heap grew by ${(grown / 2 ** 20).toFixed(1)} MB for 24 MB of URLs (bound: 4 MB)`);
});

test('a store that fails on the fast path is not asked again by Fastify: one query cut off is one query', async (t) => {
  const { store } = await filledStore(t);
  let asked = 0;
  const timingOut: QueryStore = { ...WITHOUT_COMPANIONS,
    listOrders: () => (asked++, Promise.reject(new QueryTimeoutError('cancelled past its time limit'))),
    listBundles: (f, p) => store.listBundles(f, p),
    lastBlock: () => store.lastBlock(),
    close: () => store.close(),
  };
  const { port, viaFastify } = await listen(t, timingOut, false);
  const answer = await get(port, `${ORDERS}?pagination.first=5`);
  assert.equal(answer.status, 504);
  assert.equal(JSON.parse(answer.body.toString()).code, 4);
  assert.ok(answer.headers.includes('X-Block-Height: 2'));
  assert.equal(viaFastify(), 1, 'Fastify said what went wrong');
  assert.equal(asked, 1, 'the store was asked once');
});
