/**
 * Cross-origin requests as the original's gateway answers them by default
 * (every origin, preflights kept 7200 s), configurable, and
 * `X-Content-Type-Options: nosniff` on every answer: pages answered by the
 * fast path and by Fastify alike, refusals, health.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test, type TestContext } from 'node:test';
import type { HttpOptions } from '../../src/api/http-options.js';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { listening } from './raw-http.js';

const ORDERS = '/api/v2/orders';
const PAGE = `${ORDERS}?pagination.first=2`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function ask(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, method }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A server of each path: the fast path, and Fastify alone (every request logged). */
async function both(t: TestContext, http: Partial<HttpOptions> = {}): Promise<{ fast: number; full: number }> {
  const store = createModelStore([makeBlock(1, { orders: [makeOrder(1), makeOrder(2), makeOrder(3)] })]);
  const fast = await listening(t, { store, http });
  const full = await listening(t, { store, http, logRequests: true });
  return { fast: fast.port, full: full.port };
}

const without = (h: Answer['headers'], ...names: string[]) =>
  Object.fromEntries(Object.entries(h).filter(([k]) => !['date', ...names].includes(k)));

test('by default every origin may read every answer, pages of both paths alike, refusals and health too', async (t) => {
  const { fast, full } = await both(t);
  const origin = { origin: 'https://app.example' };
  for (const port of [fast, full]) {
    for (const [path, status] of [[PAGE, 200], [`${ORDERS}?pagination.first=0`, 400], ['/nowhere', 404], ['/health', 200], ['/ready', 503]] as const) {
      for (const headers of [origin, {}]) {
        const answer = await ask(port, path, headers);
        assert.equal(answer.status, status, path);
        assert.equal(answer.headers['access-control-allow-origin'], '*', `${path}: with or without Origin, the same answer`);
        assert.match(String(answer.headers['access-control-expose-headers']), /X-Block-Height, X-Block-Timestamp, ETag, RateLimit-Limit/);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', path);
      }
    }
  }
  const [a, b] = [await ask(fast, PAGE, origin), await ask(full, PAGE, origin)];
  assert.deepEqual(without(a.headers), without(b.headers), 'the fast path sends what Fastify sends');
  assert.equal(a.body, b.body);
});

test('a preflight is answered 204 with the method and headers asked for, kept 7200 s', async (t) => {
  const { fast } = await both(t);
  const answer = await ask(fast, PAGE, {
    origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-requested-with, if-none-match',
  }, 'OPTIONS');
  assert.equal(answer.status, 204);
  assert.equal(answer.headers['access-control-allow-origin'], '*');
  assert.equal(answer.headers['access-control-allow-methods'], 'GET');
  assert.equal(answer.headers['access-control-allow-headers'], 'x-requested-with, if-none-match');
  assert.equal(answer.headers['access-control-max-age'], '7200');
  assert.equal(answer.body, '');
  const post = await ask(fast, PAGE, { origin: 'https://app.example', 'access-control-request-method': 'POST' }, 'OPTIONS');
  assert.equal(post.status, 204);
  assert.equal(post.headers['access-control-allow-methods'], undefined, 'a method the API does not take is not allowed');
});

test('with a list of origins, an allowed one is echoed with Vary: Origin on both paths alike; another gets nothing', async (t) => {
  const { fast, full } = await both(t, { corsOrigins: ['https://app.example', 'wallet.example'], corsMaxAgeSeconds: 60 });
  const allowed = { origin: 'https://app.example', 'accept-encoding': 'gzip' };
  const [a, b] = [await ask(fast, PAGE, allowed), await ask(full, PAGE, allowed)];
  for (const answer of [a, b]) {
    assert.equal(answer.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(answer.headers.vary, 'Origin, accept-encoding');
  }
  assert.deepEqual(without(a.headers), without(b.headers));
  assert.equal((await ask(fast, PAGE, { origin: 'http://wallet.example' })).headers['access-control-allow-origin'], 'http://wallet.example',
    'an origin given without its scheme allows either');
  for (const port of [fast, full]) {
    const other = await ask(port, PAGE, { origin: 'https://evil.example' });
    assert.equal(other.status, 200);
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    assert.match(String(other.headers.vary), /Origin/);
  }
  const preflight = await ask(fast, PAGE, { origin: 'https://app.example', 'access-control-request-method': 'GET' }, 'OPTIONS');
  assert.equal(preflight.headers['access-control-max-age'], '60');
});

test('CORS off: no CORS header, and OPTIONS is a route like any other (none)', async (t) => {
  const { fast } = await both(t, { corsOrigins: [] });
  const answer = await ask(fast, PAGE, { origin: 'https://app.example' });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers['access-control-allow-origin'], undefined);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  const preflight = await ask(fast, PAGE, { origin: 'https://app.example', 'access-control-request-method': 'GET' }, 'OPTIONS');
  assert.equal(preflight.status, 404);
});
