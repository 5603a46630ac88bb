/**
 * HTTP/1.1 pipelining through a real server: the answers come in order, the
 * requests of one connection are answered one at a time (a client that
 * pipelines pages and reads none made a process hold every answer at once,
 * ~10 MB a connection on the real recording's pages), and a connection with
 * more requests waiting than MAX_PIPELINED is closed.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { MAX_PIPELINED } from '../../src/api/http-server.js';
import type { QueryStore } from '../../src/store/store.js';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { listening, open, raw, readUntilClosed } from './raw-http.js';

const ORDERS = 2000;

interface Served {
  app: FastifyInstance;
  port: number;
  reads: () => number;
  mostAtOnce: () => number;
  /** Answers handed wholly to the kernel ('finish'), and the server's side of each connection, in order. */
  finished: () => number;
  sockets: Socket[];
}

/** A server over a model store of `ORDERS` orders, counting the pages read and the most read at once. */
async function served(t: TestContext): Promise<Served> {
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
  const { app, port } = await listening(t, { store, answerCacheBytes: 0 });
  let finished = 0;
  const sockets: Socket[] = [];
  app.server.on('connection', (socket: Socket) => sockets.push(socket));
  app.server.on('request', (_req, res: ServerResponse) => res.once('finish', () => finished++));
  return { app, port, reads: () => reads, mostAtOnce: () => most, finished: () => finished, sockets };
}

/** Resolves once `condition` holds, asked at every turn of the event loop; the deadline only stops a hang. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what}: not within 30 s`);
    await new Promise((r) => setImmediate(r));
  }
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
  const { port, reads, finished, sockets } = await served(t);
  const socket = await open(port);
  t.after(() => socket.destroy());
  socket.pause();
  // 40 pages of 2,000 orders (~1.5 MB each, 60 MB in all): the connection's buffers take a few.
  socket.write(Array.from({ length: 40 }, (_, i) => get(`/api/v2/orders?pagination.first=${ORDERS - i}`)).join(''));
  // The server's side backs up: the answer it writes cannot be handed to the kernel, so it does not finish, and the
  // next page is read only once it has (one at a time): the reads have stopped, one past the answers finished.
  await until(() => sockets[0]?.writableNeedDrain === true && reads() === finished() + 1, 'the connection to back up');
  assert.ok(reads() < 30, `${reads()} of 40 pages read for a client that read none`);
  // Reading, it gets every answer.
  socket.resume();
  const rest = await readUntilClosed(socket, get('/health', true), 60_000);
  assert.ok(rest.closed);
  assert.equal(reads(), 40);
});

test(`a connection with more than ${MAX_PIPELINED} requests waiting is closed`, async (t) => {
  const { app, port, sockets } = await served(t);
  // The first never ends (the order stream), so every request after it waits.
  const waiting = (n: number) => get('/api/v2/stream/orders') + Array.from({ length: n }, () => get('/health')).join('');
  // As many as may wait: once the server has taken every request, the connection is still open.
  const requests = () => finishedRequests;
  let finishedRequests = 0;
  app.server.on('request', () => finishedRequests++);
  const within = await open(port);
  t.after(() => within.destroy());
  within.write(waiting(MAX_PIPELINED));
  await until(() => requests() === MAX_PIPELINED + 1, 'every request to reach the server');
  assert.equal(sockets[0]!.destroyed, false, 'as many as may wait: the connection stays');
  const over = await raw(port, waiting(MAX_PIPELINED + 1), 10_000);
  assert.ok(over.closed, 'one more: closed');
});
