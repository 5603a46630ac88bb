/**
 * The docs page and the OpenAPI document are ordinary routes: CORS, the
 * error body with the block headers for what they refuse, and the document
 * served as JSON, the same at both of its URLs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { openStore } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { simulatedStore, type ServedStore } from '../support/served-stores.js';

let served: ServedStore;
let store: QueryStore;
let app: FastifyInstance;
before(async () => {
  served = simulatedStore(10, 3);
  store = await openStore({ dataDir: served.dataDir }, { readOnly: true });
  app = await buildApp({ store, http: { corsOrigins: ['https://app.example'] } });
});
after(async () => {
  await app?.close();
  await store?.close();
  served?.remove();
});

test('the document at /api/v2/openapi.json, the same the page reads', async () => {
  const res = await app.inject('/api/v2/openapi.json');
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const doc = res.json() as { openapi: string; paths: Record<string, unknown> };
  assert.equal(doc.openapi, '3.1.0');
  assert.deepEqual((await app.inject('/docs/json')).json(), doc);
  const page = await app.inject('/docs');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /swagger-ui/);
});

test('CORS as on every route', async () => {
  for (const url of ['/docs', '/api/v2/openapi.json', '/docs/static/swagger-ui.css']) {
    const res = await app.inject({ url, headers: { origin: 'https://app.example' } });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.headers['access-control-allow-origin'], 'https://app.example', url);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
  }
  const preflight = await app.inject({
    method: 'OPTIONS', url: '/api/v2/openapi.json', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
  });
  assert.equal(preflight.statusCode, 204);
  const foreign = await app.inject({ url: '/api/v2/openapi.json', headers: { origin: 'https://other.example' } });
  assert.equal(foreign.headers['access-control-allow-origin'], undefined);
});

test('what they refuse is in the error body, with the block headers', async () => {
  const height = String((await store.lastBlock())!.height);
  for (const [method, url, status, code] of [
    ['GET', '/docs/static/missing.js', 404, 5], ['GET', '/docs/nothing', 404, 5], ['POST', '/docs', 405, 12], ['DELETE', '/api/v2/openapi.json', 405, 12],
  ] as const) {
    const res = await app.inject({ method, url });
    assert.equal(res.statusCode, status, `${method} ${url}`);
    const body = res.json<{ code: number; message: string; details: unknown[] }>();
    assert.equal(body.code, code, `${method} ${url}`);
    assert.deepEqual(body.details, [], `${method} ${url}`);
    if (status === 404) assert.equal(body.message, 'Not Found');
    assert.equal(res.headers['x-block-height'], height, `${method} ${url}`);
  }
});
