/**
 * Requests that ask to change protocol, through a real server over raw
 * sockets. One asking for anything but a WebSocket (`curl --http2` asks
 * every plain-HTTP request for `h2c`) is answered over HTTP/1.1 as if it had
 * not asked. It used to be a 404, or the `ws` library's plain-text 400 on
 * the stream's path. A WebSocket handshake that `ws` refuses gets the
 * envelope with the block headers, as a stream refused over HTTP does.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { assertEnvelope, listening, parse, raw } from './raw-http.js';

const LIVE = { status: STATUS.ACTIVE, type: TYPE.LIMIT, timeInForce: TIF.GTC };

async function served(t: TestContext): Promise<number> {
  const store = createModelStore([makeBlock(1), makeBlock(7, { orders: [makeOrder(1, LIVE), makeOrder(2, LIVE)] })]);
  return (await listening(t, { store })).port;
}

const H2C = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
const WS_KEY = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

test('a request asking to upgrade to h2c (curl --http2) gets the answer it would without, and the connection ends with it', async (t) => {
  const port = await served(t);
  for (const path of ['/api/v2/orders?pagination.first=1', '/api/v2/order/' + makeOrder(2, LIVE).id, '/health', '/api/v2/nothing']) {
    const plain = parse((await raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).text);
    const asked = await raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${H2C}\r\n`);
    assert.ok(asked.closed, `${path}: the connection ends with the answer`);
    const answer = parse(asked.text);
    assert.equal(answer.status, plain.status, path);
    assert.equal(answer.body, plain.body, path);
    assert.equal(answer.headers.get('x-block-height'), plain.headers.get('x-block-height'), path);
    assert.equal(answer.headers.get('access-control-allow-origin'), '*', path);
    assert.equal(answer.headers.get('connection'), 'close', path);
  }
});

test('the order stream asked for over h2c is the HTTP stream: its snapshot comes', async (t) => {
  const port = await served(t);
  const asked = await raw(port, `GET /api/v2/stream/orders HTTP/1.1\r\nHost: x\r\n${H2C}\r\n`, 1500);
  assert.match(asked.text, /^HTTP\/1\.1 200 /);
  const snapshot = asked.text.slice(asked.text.indexOf('\r\n\r\n') + 4);
  assert.match(snapshot, /"snapshot":\{"orders":\[/);
  assert.ok(snapshot.includes(makeOrder(1, LIVE).id) && snapshot.includes(makeOrder(2, LIVE).id));
});

test('a WebSocket handshake the server cannot take is refused in the envelope, with the block headers', async (t) => {
  const port = await served(t);
  const upgrade = 'Connection: Upgrade\r\nUpgrade: websocket\r\n';
  const cases: [string, string, number, number, string][] = [
    ['no key', `GET /api/v2/stream/orders HTTP/1.1\r\nHost: x\r\n${upgrade}Sec-WebSocket-Version: 13\r\n\r\n`, 400, 3, 'Sec-WebSocket-Key'],
    ['a version it does not speak', `GET /api/v2/stream/orders HTTP/1.1\r\nHost: x\r\n${upgrade}${WS_KEY}Sec-WebSocket-Version: 99\r\n\r\n`, 400, 3, 'Sec-WebSocket-Version'],
    ['a method that is not GET', `POST /api/v2/stream/orders HTTP/1.1\r\nHost: x\r\n${upgrade}${WS_KEY}Sec-WebSocket-Version: 13\r\n\r\n`, 405, 12, 'method'],
  ];
  for (const [what, head, status, grpc, mention] of cases) {
    const answer = parse((await raw(port, head)).text);
    assertEnvelope(answer, status, grpc, mention);
    assert.equal(answer.headers.get('x-block-height'), '7', what);
    if (status === 405) assert.equal(answer.headers.get('allow'), 'GET, HEAD, OPTIONS', what);
    if (mention === 'Sec-WebSocket-Version') assert.equal(answer.headers.get('sec-websocket-version'), '13, 8', what);
  }
});

test('a stream refused over HTTP names the block, as every other refusal does', async (t) => {
  const port = await served(t);
  const answer = parse((await raw(port, 'GET /api/v2/stream/orders?marketIds=zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).text);
  assert.equal(answer.status, 400);
  assert.equal(answer.headers.get('x-block-height'), '7');
  assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
});
