/**
 * The optional rate limit per client (src/api/rate-limit.ts): the
 * original's headers on every answer of both paths, a 429 in the envelope
 * past the burst, a bucket per client (X-Forwarded-For believed from a
 * trusted proxy only), health checks never limited, and its memory bounded.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test, type TestContext } from 'node:test';
import type { HttpOptions } from '../../src/api/http-options.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { assertEnvelope, listening, parse, raw } from './raw-http.js';

const PAGE = '/api/v2/orders?pagination.first=1';

async function serve(t: TestContext, http: Partial<HttpOptions>, logRequests = false): Promise<string> {
  const store = createModelStore([makeBlock(3, { orders: [makeOrder(1), makeOrder(2)] })]);
  const { port } = await listening(t, { store, http, logRequests });
  return `http://127.0.0.1:${port}`;
}

const limited = { rateLimit: { perSecond: 0.5, burst: 3 } };

test('off by default: no rate limit header', async (t) => {
  const base = await serve(t, {});
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${base}${PAGE}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('ratelimit-limit'), null);
  }
});

for (const [path, logRequests] of [['fast path', false], ['Fastify', true]] as const) {
  test(`past its burst a client is refused 429 in the envelope, with the original's headers (${path})`, async (t) => {
    const base = await serve(t, limited, logRequests);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${base}${PAGE}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit-limit'), '1', 'the rate, rounded, as the original says it');
      assert.equal(res.headers.get('ratelimit-reset'), '1');
      assert.equal(res.headers.get('ratelimit-request-remote-addr'), '127.0.0.1');
      remaining.push(res.headers.get('ratelimit-remaining')!);
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const refused = await fetch(`${base}${PAGE}`);
    assert.equal(refused.status, 429);
    assert.deepEqual(Object.keys((await refused.json()) as object), ['code', 'message', 'details']);
    assert.equal(refused.headers.get('ratelimit-remaining'), '0');
    assert.equal(refused.headers.get('retry-after'), '2', 'a token comes back in 2 s at 0.5/s');
    assert.equal(refused.headers.get('x-block-height'), '3');
    assert.equal(refused.headers.get('access-control-allow-origin'), '*', 'a browser app may read why');
    assert.equal((await fetch(`${base}/health`)).status, 200, 'health checks are not limited');
    assert.equal((await fetch(`${base}/ready`)).headers.get('ratelimit-limit'), null);
  });
}

test('a WebSocket stream is a request like any other: past the burst its upgrade is refused 429 in the envelope, on its socket', async (t) => {
  const base = await serve(t, limited);
  const port = Number(new URL(base).port);
  const upgrade = 'GET /api/v2/stream/orders HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
  for (let i = 0; i < 3; i++) assert.match((await raw(port, upgrade, 300)).text, /^HTTP\/1\.1 101 /, `upgrade ${i + 1} of the burst`);
  const refused = parse((await raw(port, upgrade)).text);
  assertEnvelope(refused, 429, 8, 'rate limit exceeded');
  assert.equal(refused.headers.get('ratelimit-remaining'), '0');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.equal(refused.headers.get('x-block-height'), '3');
  // The same client's pages are refused too: one bucket.
  assert.equal((await fetch(`${base}${PAGE}`)).status, 429);
});

test('a bucket per client: X-Forwarded-For names the client behind a trusted proxy, and only there', async (t) => {
  const trusted = await serve(t, limited);
  for (let i = 0; i < 3; i++) assert.equal((await fetch(`${trusted}${PAGE}`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 200);
  const exhausted = await fetch(`${trusted}${PAGE}`, { headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' } });
  assert.equal(exhausted.status, 429, 'the rightmost address is the one the proxy saw');
  const other = await fetch(`${trusted}${PAGE}`, { headers: { 'x-forwarded-for': '203.0.113.10' } });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get('ratelimit-request-remote-addr'), '203.0.113.10');

  const untrusting = await serve(t, { ...limited, trustedProxies: [] });
  for (let i = 0; i < 3; i++) await fetch(`${untrusting}${PAGE}`, { headers: { 'x-forwarded-for': `192.0.2.${i}` } });
  const spoofed = await fetch(`${untrusting}${PAGE}`, { headers: { 'x-forwarded-for': '192.0.2.200' } });
  assert.equal(spoofed.status, 429, 'a client cannot escape its bucket by naming another address');
  assert.equal(spoofed.headers.get('ratelimit-request-remote-addr'), '127.0.0.1');
});

test('tokens come back at the rate; the buckets of 200,000 clients stay within their bound', (t) => {
  let now = 0;
  const limiter = new RateLimiter({ perSecond: 2, burst: 2 }, ['127.0.0.1'], () => now);
  const from = (address: string) => ({ socket: { remoteAddress: '127.0.0.1' }, headers: { 'x-forwarded-for': address } }) as unknown as IncomingMessage;
  assert.ok(limiter.take(from('10.0.0.1')).allowed);
  assert.ok(limiter.take(from('10.0.0.1')).allowed);
  assert.ok(!limiter.take(from('10.0.0.1')).allowed);
  now += 500;
  assert.ok(limiter.take(from('10.0.0.1')).allowed, 'one token back after half a second at 2/s');
  assert.ok(!limiter.take(from('10.0.0.1')).allowed);
  for (let i = 0; i < 200_000; i++) limiter.take(from(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`));
  assert.ok(limiter.size.bytes <= 8 << 20, `${limiter.size.bytes} bytes`);
  assert.ok(limiter.size.entries > 10_000, `${limiter.size.entries} buckets kept`);
  // One client among all those still gets its own bucket at once: its key is kept in place, not deleted and added
  // again (V8's Map then lengthens that key's chain, up to 300 us a request among 50,000 others). Counted, not timed.
  limiter.take(from('10.255.0.1'));
  const deleted = t.mock.method(Map.prototype, 'delete');
  const added = t.mock.method(Map.prototype, 'set');
  for (let i = 0; i < 10_000; i++) limiter.take(from('10.255.0.1'));
  const [deletes, sets] = [deleted.mock.callCount(), added.mock.callCount()];
  deleted.mock.restore();
  added.mock.restore();
  assert.deepEqual({ deletes, sets }, { deletes: 0, sets: 0 }, '10,000 requests of one client touch no Map entry but their own, in place');
});
