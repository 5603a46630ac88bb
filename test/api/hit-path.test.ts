/**
 * The hit path (src/api/hit-path.ts) over real HTTP: a URL answered once is
 * answered again before Fastify, with the full path's status, headers and
 * bytes, never older than the last committed block, and never for a request
 * the full path would answer otherwise.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { buildServer } from '../../src/api/server.js';
import { STATUS } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { writeBlocks, type QueryStore } from '../../src/store/store.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { block, hex, order, tempStore } from '../store/helpers.js';

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

/** Reads of the store's last block, counted. */
function countingLastBlock(store: SqliteStore): { store: QueryStore; reads: () => number } {
  let reads = 0;
  const wrapped: QueryStore = {
    listOrders: (f, p) => store.listOrders(f, p),
    listBundles: (f, p) => store.listBundles(f, p),
    lastBlock: () => (reads++, store.lastBlock()),
    close: () => store.close(),
  };
  return { store: wrapped, reads: () => reads };
}

async function serve(
  t: TestContext, logRequests = false,
): Promise<{ store: SqliteStore; port: number; viaFastify: () => number; lastBlockReads: () => number }> {
  const { store } = tempStore(t);
  const orders: Order[] = [];
  for (let k = 1; k <= 80; k++) orders.push(order(k, { status: k % 3 === 0 ? STATUS.FILLED : STATUS.ACTIVE, reference: `ref-${k % 4}` }));
  await writeBlocks(store, [block(1, { orders: orders.slice(0, 40) }), block(2, { orders: orders.slice(40) })]);
  const counted = countingLastBlock(store);
  const app = await buildServer({ store: counted.store, logRequests });
  let fastifyRequests = 0;
  app.addHook('onRequest', async () => void fastifyRequests++);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { store, port: (app.server.address() as AddressInfo).port, viaFastify: () => fastifyRequests, lastBlockReads: counted.reads };
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
  { name: 'bundles', path: `${BUNDLES}?pagination.first=5` },
];

test('a URL answered once is answered again before Fastify, with the same status, headers and bytes', async (t) => {
  for (const c of CASES) {
    // A server each: the hit path knows an URL whatever the coding it was first asked in.
    const { port, viaFastify } = await serve(t);
    const before = viaFastify();
    const full = await get(port, c.path, c.headers);
    assert.equal(viaFastify(), before + 1, `${c.name}: the first request goes through Fastify`);
    const hit = await get(port, c.path, c.headers);
    assert.equal(viaFastify(), before + 1, `${c.name}: the second does not`);
    assert.equal(hit.status, full.status, c.name);
    assert.deepEqual(headerSet(hit), headerSet(full), c.name);
    assert.ok(hit.body.equals(full.body), `${c.name}: same bytes`);
  }
});

test('If-None-Match on the hit path: 304 with the full path headers while unchanged, the new answer after a block', async (t) => {
  const { store, port, viaFastify } = await serve(t);
  const path = `${ORDERS}?pagination.first=10`;
  const first = await get(port, path);
  const etag = first.headers.find((h) => h.startsWith('etag: '))!.slice(6);
  const full304 = await get(port, `${path}&pagination.newest_first=true`, { 'if-none-match': etag });
  const seen = viaFastify();
  const hit304 = await get(port, path, { 'if-none-match': etag });
  assert.equal(viaFastify(), seen, 'answered before Fastify');
  assert.equal(hit304.status, 304);
  assert.equal(hit304.body.length, 0);
  assert.deepEqual(headerSet(hit304), headerSet(full304));

  await writeBlocks(store, [block(3, { orders: [order(500)] })]);
  const after = await get(port, path, { 'if-none-match': etag });
  assert.equal(viaFastify(), seen + 1, 'a committed block sends the request to the full path');
  assert.equal(after.status, 200);
  assert.ok(after.headers.includes('X-Block-Height: 3'), 'the new block, named with the original case');
  assert.equal(JSON.parse(after.body.toString()).orders.edges[0].node.id, hex(500));
  const again = await get(port, path);
  assert.equal(viaFastify(), seen + 1, 'and is a hit again after');
  assert.ok(again.body.equals(after.body));
});

test('what the full path refuses never becomes a hit', async (t) => {
  const { port, viaFastify } = await serve(t);
  const bad = `${ORDERS}?pagination.first=nope`;
  for (let i = 1; i <= 3; i++) {
    const answer = await get(port, bad);
    assert.equal(answer.status, 400);
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
  await get(port, `${ORDERS}?pagination.first=30`);
  assert.equal(post, 404, 'a POST is the full path\'s to refuse');
  assert.equal(viaFastify(), 5);
});

test('with every request logged, every request goes through Fastify', async (t) => {
  const { port, viaFastify } = await serve(t, true);
  for (let i = 1; i <= 3; i++) await get(port, `${ORDERS}?pagination.first=5`);
  assert.equal(viaFastify(), 3);
});

test('a request the hit path passes on reads the last block once: the full path takes the hit path\'s read', async (t) => {
  const { store, port, viaFastify, lastBlockReads } = await serve(t);
  const path = `${ORDERS}?pagination.first=10`;
  await get(port, path);
  assert.equal(lastBlockReads(), 1, 'a new URL: the full path reads it');
  await get(port, path);
  assert.equal(lastBlockReads(), 2, 'a hit: the hit path reads it');
  await writeBlocks(store, [block(3, { orders: [order(500)] })]);
  const seen = viaFastify();
  const after = await get(port, path);
  assert.equal(viaFastify(), seen + 1, 'the answer kept is of an older block: the full path answers');
  assert.equal(lastBlockReads(), 3, 'with the block the hit path read');
  assert.ok(after.headers.includes('X-Block-Height: 3'));
});
