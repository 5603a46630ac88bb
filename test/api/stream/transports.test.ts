/**
 * GET /api/v2/stream/orders through a real server over the model store:
 * the snapshot over both transports, the original's refusals before the
 * first frame (a status and body over HTTP; over WebSocket that body as the
 * one frame, then a close saying why), the per-client limit, a resume the
 * store cannot serve, and an upgrade on another path.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import { buildApp } from '../../../src/api/app.js';
import { STATUS, TIF, TYPE } from '../../../src/domain/enums.js';
import { createModelStore } from '../../support/model.js';
import { hexId, makeBlock, makeOrder } from '../fixtures.js';

const blocks = [
  makeBlock(1, {
    orders: [
      makeOrder(1, { status: STATUS.ACTIVE, type: TYPE.LIMIT, timeInForce: TIF.GTC }),
      makeOrder(2, { status: STATUS.FILLED }),
      makeOrder(3, { status: STATUS.ACTIVE, type: TYPE.LIMIT, timeInForce: TIF.GTC, marketId: hexId('a', 2) }),
    ],
  }),
];

let app: FastifyInstance;
let base: string;
before(async () => {
  app = await buildApp({ store: createModelStore(blocks), http: { streamsPerClient: 2 } });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
after(() => app.close());

const PATH = '/api/v2/stream/orders';

/**
 * The first line of a chunked HTTP stream, and its status, then the request
 * is dropped; after `quietMs` with no line, what came (a resume may owe nothing yet).
 */
function httpFirst(query: string, quietMs?: number): Promise<{ status: number; type: string | undefined; text: string; drop(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${PATH}${query}`, (res) => {
      let text = '';
      res.setEncoding('utf8');
      const done = () => resolve({ status: res.statusCode!, type: res.headers['content-type'], text: text.split('\n')[0]!, drop: () => req.destroy() });
      if (quietMs !== undefined) setTimeout(done, quietMs);
      res.on('data', (c: string) => {
        text += c;
        if (text.includes('\n')) done();
      });
      res.on('end', done);
    });
    req.once('error', reject);
    req.end();
  });
}

/** The frames a WebSocket gets until it is closed, and how it was closed. */
function wsUntilClosed(path: string): Promise<{ frames: string[]; code: number; reason: string }> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}${path}`);
  const frames: string[] = [];
  ws.on('message', (m) => frames.push(String(m)));
  return new Promise((resolve, reject) => {
    ws.once('close', (code, reason) => resolve({ frames, code, reason: String(reason) }));
    ws.once('error', reject);
  });
}

function wsFirst(query: string): Promise<{ frame: string; ws: WebSocket }> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}${PATH}${query}`);
  return new Promise((resolve, reject) => {
    ws.once('message', (m) => resolve({ frame: String(m), ws }));
    ws.once('error', reject);
  });
}

const liveNode = (n: number, market = hexId('a', 1)) => `"id":"${hexId('0', n)}","marketId":"${market}"`;

test('the snapshot: the live orders a filter matches, newest first, enums as numbers, over both transports', async () => {
  const http = await httpFirst('');
  http.drop();
  assert.equal(http.status, 200);
  assert.equal(http.type, 'application/json');
  const ws = await wsFirst('');
  ws.ws.terminate();
  assert.equal(ws.frame, http.text);
  const snapshot = JSON.parse(http.text) as { result: { snapshot: { orders: Record<string, unknown>[]; lastPage: boolean } } };
  assert.equal(snapshot.result.snapshot.lastPage, true);
  assert.deepEqual(snapshot.result.snapshot.orders.map((o) => o.id).sort(), [hexId('0', 1), hexId('0', 3)]);
  assert.equal(snapshot.result.snapshot.orders[0]!.status, 1);
  assert.ok(http.text.includes(liveNode(3, hexId('a', 2))));
  const market = await httpFirst(`?marketIds=${hexId('a', 2).toUpperCase()}`);
  market.drop();
  const orders = (JSON.parse(market.text) as typeof snapshot).result.snapshot.orders;
  assert.deepEqual(orders.map((o) => o.id), [hexId('0', 3)], 'the snapshot compares ids whatever their case');
});

test('refusals before the first frame: the original\'s status and body over HTTP, that body then a close over WebSocket', async () => {
  const bad = await httpFirst('?marketIds=abc');
  assert.equal(bad.status, 400);
  const body = {
    code: 3, message: 'InvalidArgument error',
    details: [{ '@type': 'type.googleapis.com/vega.ErrorDetail', code: 10000, message: 'invalid party id', inner: 'one or more market id is invalid' }],
  };
  // The stream's error frame, as the original's gateway writes it before any message.
  assert.deepEqual(JSON.parse(bad.text), { error: body });
  const ws = await wsUntilClosed(`${PATH}?partyIds=abc`);
  assert.deepEqual(ws.frames.map((f) => JSON.parse(f) as unknown), [{ error: { ...body, details: [{ ...body.details[0], inner: 'one or more party id is invalid' }] } }]);
  assert.equal(ws.code, 1008);

  const gateway = await httpFirst('?excludeLiquidity=maybe');
  assert.equal(gateway.status, 400);
  assert.match(gateway.text, /parsing field \\"exclude_liquidity\\"/);
  // A resume from before what the store holds: the model holds changes from block 1 on.
  const resume = await httpFirst('?fromBlock=x');
  assert.equal(resume.status, 400);

  // No WebSocket on another path: the upgrade is answered 404 in the envelope.
  await assert.rejects(wsUntilClosed('/api/v2/orders'), /Unexpected server response: 404/);
});

test('a client holds at most its limit of streams; one more is refused 429 (WebSocket: 1013), and a slot freed is taken again', async () => {
  const a = await wsFirst('');
  const b = await httpFirst('');
  const refused = await httpFirst('');
  assert.equal(refused.status, 429);
  assert.deepEqual(JSON.parse(refused.text), { error: { code: 8, message: 'client reached max subscription allowed' } });
  const ws = await wsUntilClosed(PATH);
  assert.equal(ws.code, 1013);
  a.ws.terminate();
  b.drop();
  // The slots come back once the server sees both go: asked until then; the deadline only stops a hang.
  const deadline = Date.now() + 30_000;
  let again = await httpFirst('');
  again.drop();
  while (again.status !== 200 && Date.now() < deadline) {
    await new Promise((r) => setImmediate(r));
    again = await httpFirst('');
    again.drop();
  }
  assert.equal(again.status, 200);
});

test('fuzzed: 300 random stream requests are each answered with a snapshot or a refusal in the stream\'s error frame, never a server error', async () => {
  const fc = (await import('fast-check')).default;
  const key = fc.constantFrom('marketIds', 'market_ids', 'partyIds', 'party_ids', 'excludeLiquidity', 'exclude_liquidity', 'fromBlock', 'x', '');
  const value = fc.oneof(
    fc.constantFrom(hexId('a', 1), hexId('a', 1).toUpperCase(), hexId('b', 1), 'network', 'true', 'maybe', '0', '3', '-1', '18446744073709551616', '', '%zz', '\u0000'),
    fc.string({ maxLength: 20 }),
  );
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 5 }), async (pairs) => {
    const query = pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${[...Buffer.from(v)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}`).join('&')}`;
    const answer = await httpFirst(query, 300);
    answer.drop();
    assert.ok(answer.status < 500, `${query}: ${answer.status} ${answer.text}`);
    // A resume is owed the blocks after its height: none, here, so nothing comes.
    if (answer.status === 200 && answer.text === '') return;
    const frame = JSON.parse(answer.text) as Record<string, unknown>;
    if (answer.status === 200) assert.ok('result' in frame, `${query}: ${answer.text}`);
    else assert.ok('error' in frame || 'code' in frame, `${query}: ${answer.text}`);
  }), { numRuns: 300, seed: 20261125 });
});

test('a client\'s WebSocket message past the limit closes it with 1009 "message too big" at once; another client streams on', async () => {
  const own = await buildApp({ store: createModelStore(blocks) });
  const url = `${(await own.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws')}${PATH}`;
  try {
    const open = (): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string; unsent: number }> }> => new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const closed = new Promise<{ code: number; reason: string; unsent: number }>((done) => {
        ws.once('close', (code, reason) => done({ code, reason: String(reason), unsent: ws.bufferedAmount }));
      });
      ws.once('message', () => resolve({ ws, closed }));
      ws.once('error', reject);
    });
    const [whole, fragment, bystander] = await Promise.all([open(), open(), open()]);
    // A stray small message is ignored.
    bystander.ws.send('{"subscribe":true}');
    whole.ws.send(Buffer.alloc(64 << 20, 'x'));
    // A first fragment past the limit, its message never finished: the close cannot wait for the whole.
    fragment.ws.send(Buffer.alloc(64 << 10, 'x'), { fin: false });
    for (const { closed } of [whole, fragment]) {
      const { code, reason } = await closed;
      assert.equal(code, 1009);
      assert.equal(reason, 'message too big');
    }
    assert.equal(bystander.ws.readyState, WebSocket.OPEN);
    await new Promise<void>((resolve) => {
      bystander.ws.once('pong', () => resolve());
      bystander.ws.ping();
    });
    bystander.ws.close();
    assert.equal((await bystander.closed).code, 1005);
  } finally {
    await own.close();
  }
});
