/**
 * One writer of what every response carries (src/api/answer-headers.ts): each
 * kind of answer and refusal, whoever writes it (the fast path, Fastify, the
 * front door, Node's parser's refusals on the socket, the stream, health,
 * metrics), carries the common headers (COMMON_HEADERS) and the CORS
 * headers of every origin; every JSON body says its charset. The expected
 * set is read from COMMON_HEADERS itself: a header added there is checked on
 * every kind of response at once.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { COMMON_HEADERS, JSON_TYPE } from '../../src/api/answer-headers.js';
import type { AppOptions } from '../../src/api/app.js';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { listening, parse, raw, type ParsedResponse } from './raw-http.js';

const ORDERS = '/api/v2/orders';

async function served(t: TestContext, options: Partial<AppOptions> = {}): Promise<number> {
  const store = createModelStore([makeBlock(1), makeBlock(7, { orders: [makeOrder(1), makeOrder(2)] })]);
  const { port } = await listening(t, { store, ...options });
  return port;
}

/** One request over a connection of its own, as sent: `head` without its blank line. */
async function send(port: number, head: string): Promise<ParsedResponse> {
  return parse((await raw(port, `${head}\r\n\r\n`, 2000)).text);
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close${extra}`;

/** What every response must carry: the common headers, and CORS for every origin (the default). */
function assertCommon(kind: string, r: ParsedResponse): void {
  for (let i = 0; i < COMMON_HEADERS.length; i += 2) {
    assert.equal(r.headers.get(COMMON_HEADERS[i]!.toLowerCase()), COMMON_HEADERS[i + 1], `${kind} (${r.status}): ${COMMON_HEADERS[i]}`);
  }
  assert.equal(r.headers.get('access-control-allow-origin'), '*', `${kind} (${r.status}): CORS`);
  if (r.status !== 204 && r.status !== 304 && r.body.startsWith('{')) assert.equal(r.headers.get('content-type'), JSON_TYPE, `${kind}: its type, with charset`);
}

test('every kind of answer and refusal carries the common headers, whichever path wrote it', async (t) => {
  const port = await served(t);
  const fastifyOnly = await served(t, { logRequests: true });
  const limited = await served(t, { http: { rateLimit: { perSecond: 0.1, burst: 1 } } });
  const page = `${ORDERS}?pagination.first=1`;
  const first = await send(port, get(page));
  // The second request within ten seconds is past the limit.
  await send(limited, get(page));
  const kinds: [string, ParsedResponse, number][] = [
    ['a page computed by the fast path', first, 200],
    ['a page kept by the fast path', await send(port, get(page)), 200],
    ['a 304 of the fast path', await send(port, get(page, `\r\nIf-None-Match: ${first.headers.get('etag')}`)), 304],
    ['a page answered by Fastify', await send(fastifyOnly, get(page)), 200],
    ['a 304 of Fastify', await send(fastifyOnly, get(page, `\r\nIf-None-Match: ${first.headers.get('etag')}`)), 304],
    ['one order, by Fastify', await send(port, get('/api/v2/order/' + 'a'.repeat(64))), 404],
    ['a parameter refused', await send(port, get(`${ORDERS}?pagination.first=-1`)), 400],
    ['no such route', await send(port, get('/nowhere')), 404],
    ['a method that would write', await send(port, `POST ${ORDERS} HTTP/1.1\r\nHost: x\r\nContent-Length: 0`), 405],
    ['health', await send(port, get('/health')), 200],
    ['metrics', await send(port, get('/metrics')), 200],
    ['a preflight', await send(port, `OPTIONS ${ORDERS} HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nAccess-Control-Request-Method: GET`), 204],
    ['the front door: no Host', await send(port, `GET ${ORDERS} HTTP/1.1`), 400],
    ['the rate limit', await send(limited, get(page)), 429],
    ["Node's parser: not HTTP", await send(port, 'hello'), 400],
    ["Node's parser: a head too long", await send(port, get(`${ORDERS}?filter.reference=${'x'.repeat(200_000)}`)), 431],
    ['CONNECT', await send(port, 'CONNECT x:443 HTTP/1.1\r\nHost: x:443'), 405],
    ['an expectation not met', await send(port, get('/health', '\r\nExpect: 200-ok')), 417],
    ['a stream refused over HTTP', await send(port, get('/api/v2/stream/orders?marketIds=nope')), 400],
    ['a WebSocket upgrade to no stream', await send(port, get('/nowhere', '\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13')), 404],
  ];
  for (const [kind, response, status] of kinds) {
    assert.equal(response.status, status, `${kind}: ${response.body}`);
    assertCommon(kind, response);
  }
});
