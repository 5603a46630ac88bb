/**
 * HTTP/1.1 pipelining through a real server: the answers come in order, the
 * requests of one connection are answered one at a time (a client that
 * pipelines pages and reads none made a process hold every answer at once,
 * ~10 MB a connection on the real recording's pages), and a connection with
 * more requests waiting than MAX_PIPELINED is closed.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { MAX_PIPELINED } from '../../src/api/http-server.js';
import type { QueryStore } from '../../src/store/store.js';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { listening, open, raw, readUntilClosed } from './raw-http.js';

const ORDERS = 2000;

/** A server over a model store of `ORDERS` orders, counting the pages read and the most read at once. */
async function served(t: TestContext): Promise<{ port: number; reads: () => number; mostAtOnce: () => number }> {
  const model = createModelStore([makeBlock(1, { orders: Array.from({ length: ORDERS }, (_, i) => makeOrder(i + 1)) })]);
  let reads = 0;
  let now = 0;
  let most = 0;
  const store: QueryStore = {
    ...model,
    async listOrders(filter, page) {
      reads++;
      most = Math.max(most, ++now);
      // A read that takes a while, so that reads that could overlap do.
      await new Promise((r) => setTimeout(r, 5));
      try {
        return await model.listOrders(filter, page);
      } finally {
        now--;
      }
    },
  };
  // No answer cache: every request reads its page.
  const { port } = await listening(t, { store, answerCacheBytes: 0 });
  return { port, reads: () => reads, mostAtOnce: () => most };
}

const get = (path: string, last = false) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;

test('pipelined requests are answered in order, one at a time', async (t) => {
  const { port, mostAtOnce } = await served(t);
  const sizes = Array.from({ length: 10 }, (_, i) => i + 1);
  const answer = await raw(port, sizes.map((n, i) => get(`/api/v2/orders?pagination.first=${n}`, i === sizes.length - 1)).join(''), 20_000);
  assert.ok(answer.closed);
  const bodies = answer.text.split('HTTP/1.1 ').slice(1);
  assert.equal(bodies.length, 10);
  assert.deepEqual(bodies.map((b) => (b.match(/"node":/g) ?? []).length), sizes, 'each answer in its place');
  assert.equal(mostAtOnce(), 1);
});

test('a client that pipelines big pages and reads none makes the server read only what the connection takes', async (t) => {
  const { port, reads } = await served(t);
  const socket = await open(port);
  t.after(() => socket.destroy());
  socket.pause();
  // 40 pages of 2,000 orders (~1.5 MB each, 60 MB in all): the connection's buffers take a few.
  socket.write(Array.from({ length: 40 }, (_, i) => get(`/api/v2/orders?pagination.first=${ORDERS - i}`)).join(''));
  let last = -1;
  // Until the reads stop: the client reads nothing, so they stop where the buffers are full.
  for (let i = 0; i < 200 && reads() !== last; i++) {
    last = reads();
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.ok(reads() < 30, `${reads()} of 40 pages read for a client that read none`);
  // Reading, it gets every answer.
  socket.resume();
  const rest = await readUntilClosed(socket, get('/health', true), 60_000);
  assert.ok(rest.closed);
  assert.equal(reads(), 40);
});

test(`a connection with more than ${MAX_PIPELINED} requests waiting is closed`, async (t) => {
  const { port } = await served(t);
  // The first never ends (the order stream), so every request after it waits.
  const waiting = (n: number) => get('/api/v2/stream/orders') + Array.from({ length: n }, () => get('/health')).join('');
  const within = await raw(port, waiting(MAX_PIPELINED), 1500);
  assert.equal(within.closed, false, 'as many as may wait: the connection stays');
  const over = await raw(port, waiting(MAX_PIPELINED + 1), 5000);
  assert.ok(over.closed, 'one more: closed');
});
