/**
 * GET /metrics over real HTTP, scraped and parsed (./../support/prom-text.ts):
 * requests by route and status whichever path answered them (the front
 * door, the fast path, Fastify), their latency, the answer cache's hits and
 * misses, the last block, stream subscribers, ingestion, and the PostgreSQL
 * pool; the scraper is never rate limited.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { registerIngestMetrics } from '../../src/api/metrics/ingest-metrics.js';
import { buildApp } from '../../src/api/app.js';
import { STREAM_ORDERS_PATH } from '../../src/api/stream/request.js';
import { startingStatus } from '../../src/domain/ingest-status.js';
import { openStore } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { postgresOn } from '../support/backends.js';
import { runCli } from '../support/cli.js';
import { forEachServer } from '../support/postgres.js';
import { parsePrometheusText, type Scrape } from '../support/prom-text.js';
import { simulatedStore, type ServedStore } from '../support/served-stores.js';

const ORDERS = '/api/v2/orders';

function send(port: number, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function scrape(port: number): Promise<Scrape> {
  const res = await send(port, '/metrics');
  assert.equal(res.status, 200, res.body);
  assert.match(res.type, /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.body);
}

async function listening(store: QueryStore, http = {}): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildApp({ store, http });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: (app.server.address() as AddressInfo).port };
}

let served: ServedStore;
let store: QueryStore;
before(async () => {
  served = simulatedStore(30, 5);
  store = await openStore({ dataDir: served.dataDir }, { readOnly: true });
});
after(async () => {
  await store?.close();
  served?.remove();
});

test('requests are counted by route and status whoever answers them, with their latency', async () => {
  const { app, port } = await listening(store);
  try {
    await send(port, `${ORDERS}?pagination.first=3`); // the fast path, computed
    await send(port, `${ORDERS}?pagination.first=3`); // the fast path, kept
    await send(port, `${ORDERS}?pagination.first=0`); // refused: through Fastify
    await send(port, ORDERS, { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } }); // the front door
    await send(port, '/health');
    await send(port, '/nowhere');
    await send(port, '/docs/static/nothing.js');
    const m = await scrape(port);
    const requests = (route: string, status: string) => m.value('ledger_query_http_requests_total', { route, status });
    assert.equal(requests(ORDERS, '200'), 2);
    assert.equal(requests(ORDERS, '400'), 1);
    assert.equal(requests(ORDERS, '204'), 1);
    assert.equal(requests('/health', '200'), 1);
    assert.equal(requests('(unmatched)', '404'), 1);
    assert.equal(requests('/docs/static/*', '404'), 1);
    assert.equal(m.types.get('ledger_query_http_requests_total'), 'counter');
    assert.equal(m.types.get('ledger_query_http_request_duration_seconds'), 'histogram');
    assert.equal(m.value('ledger_query_http_request_duration_seconds_count', { route: ORDERS }), 4);
    assert.equal(m.value('ledger_query_http_request_duration_seconds_bucket', { route: ORDERS, le: '+Inf' }), 4);
    const seconds = m.value('ledger_query_http_request_duration_seconds_sum', { route: ORDERS })!;
    assert.ok(seconds > 0 && seconds < 30, String(seconds));
    // A scrape counts once it is answered: the next one sees the first.
    assert.equal((await scrape(port)).value('ledger_query_http_requests_total', { route: '/metrics', status: '200' }), 1);
  } finally {
    await app.close();
  }
});

test('answer cache hits and misses, the last block and the lag', async () => {
  const { app, port } = await listening(store);
  try {
    for (let i = 0; i < 3; i++) await send(port, `${ORDERS}?pagination.first=${i === 2 ? 4 : 3}`);
    const m = await scrape(port);
    assert.equal(m.value('ledger_query_answer_cache_hits_total'), 1);
    assert.equal(m.value('ledger_query_answer_cache_misses_total'), 2);
    assert.ok(m.value('ledger_query_answer_cache_bytes')! > 0);
    const last = (await store.lastBlock())!;
    assert.equal(m.value('ledger_query_last_block_height'), Number(last.height));
    assert.equal(m.value('ledger_query_last_block_timestamp_seconds'), Number(last.time / 1000n) / 1e6);
    const lag = m.value('ledger_query_ingest_lag_seconds')!;
    assert.ok(Math.abs(lag - (Date.now() / 1000 - Number(last.time / 1000n) / 1e6)) < 60, String(lag));
  } finally {
    await app.close();
  }
});

/** Scrapes until `ok` holds of a scrape, for up to 30 s (the hub takes a subscriber, or lets it go, in its own time). */
async function scrapeUntil(port: number, ok: (m: Scrape) => boolean): Promise<Scrape> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = await scrape(port);
    if (ok(m) || Date.now() > deadline) return m;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('stream subscribers: the hub counts a real stream in when it subscribes, and out when it leaves; the stream has its route label', async () => {
  const { app, port } = await listening(store);
  const subscribers = (m: Scrape) => m.value('ledger_query_stream_subscribers');
  try {
    assert.equal(subscribers(await scrape(port)), 0);
    // A real stream over HTTP: its first frame (the snapshot's) says it is subscribed.
    const req = request({ host: '127.0.0.1', port, path: STREAM_ORDERS_PATH });
    const firstFrame = new Promise<void>((resolve, reject) => {
      req.on('response', (res) => res.once('data', () => resolve()));
      req.on('error', reject);
    });
    req.end();
    await firstFrame;
    assert.equal(subscribers(await scrapeUntil(port, (m) => subscribers(m) === 1)), 1);
    req.destroy();
    const m = await scrapeUntil(port, (s) => subscribers(s) === 0 && s.value('ledger_query_http_requests_total', { route: STREAM_ORDERS_PATH, status: '200' }) === 1);
    assert.equal(subscribers(m), 0);
    // Served outside Fastify, yet labelled by its path, even when the client left it (as a stream's client does).
    assert.equal(m.value('ledger_query_http_requests_total', { route: STREAM_ORDERS_PATH, status: '200' }), 1);
    // A refused one: no subscriber, and labelled too.
    assert.equal((await send(port, `${STREAM_ORDERS_PATH}?marketIds=nothex`)).status, 400);
    const after = await scrape(port);
    assert.equal(after.value('ledger_query_http_requests_total', { route: STREAM_ORDERS_PATH, status: '400' }), 1);
    assert.equal(subscribers(after), 0);
  } finally {
    await app.close();
  }
});

test('the order routes, served under a prefix, are labelled by it whoever answers', async () => {
  const { app, port } = await listening(store);
  try {
    const id = 'ab'.repeat(32);
    await send(port, `/api/v2/order/${id}`); // no such order: 404, through the fast path's read
    await send(port, `/api/v2/order/versions/${id}`); // an empty page, through the fast path
    await send(port, `/api/v2/order/versions/${id}`); // kept
    await send(port, '/api/v2/order/nothex'); // refused
    const m = await scrape(port);
    const requests = (route: string, status: string) => m.value('ledger_query_http_requests_total', { route, status });
    assert.equal(requests('/api/v2/order/*', '404'), 1);
    assert.equal(requests('/api/v2/order/versions/*', '200'), 2);
    assert.equal(requests('/api/v2/order/*', '400'), 1);
    assert.equal(requests('(unmatched)', '404'), undefined);
  } finally {
    await app.close();
  }
});

test('ingestion, read from its status', async () => {
  const status = { ...startingStatus('file:///x'), state: 'running' as const, events: 1234, blocksCommitted: 56, eventsPerSecond: 789 };
  status.lastBlock = { height: 100n, time: 1n };
  status.heightRead = 104n;
  const registry = new Registry();
  registerIngestMetrics(registry, () => status);
  const m = parsePrometheusText(await registry.metrics());
  assert.equal(m.value('ledger_query_ingest_events_total'), 1234);
  assert.equal(m.value('ledger_query_ingest_blocks_total'), 56);
  assert.equal(m.value('ledger_query_ingest_events_per_second'), 789);
  assert.equal(m.value('ledger_query_ingest_lag_blocks'), 4);
  assert.equal(m.value('ledger_query_ingest_state', { state: 'running' }), 1);
  assert.equal(m.value('ledger_query_ingest_state', { state: 'failed' }), 0);
  status.events = 2000;
  assert.equal(parsePrometheusText(await registry.metrics()).value('ledger_query_ingest_events_total'), 2000);
});

test('the scraper is never rate limited; the docs page is, as any other path', async () => {
  const { app, port } = await listening(store, { rateLimit: { perSecond: 0.001, burst: 1 } });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await send(port, '/metrics')).status, 200);
    assert.equal((await send(port, '/docs')).status, 200);
    const refused = await send(port, '/docs');
    assert.equal(refused.status, 429);
    assert.equal((JSON.parse(refused.body) as { code: number }).code, 8);
    assert.equal((await scrape(port)).value('ledger_query_http_requests_total', { route: '/docs', status: '429' }), 1);
  } finally {
    await app.close();
  }
});

forEachServer((server) => {
  test(`the PostgreSQL pool's connections (${server.label})`, async () => {
    const fresh = await postgresOn(server).fresh(served.dataDir, 'metrics');
    const ingest = runCli(['ingest', served.source, ...fresh.args]);
    assert.equal(ingest.status, 0, ingest.stderr);
    const pgStore = await openStore(fresh.config, { readOnly: true });
    const { app, port } = await listening(pgStore);
    try {
      await send(port, `${ORDERS}?pagination.first=3`);
      const m = await scrape(port);
      const open = m.value('ledger_query_pg_pool_connections')!;
      assert.ok(open >= 1, `${open} connections`);
      // As the pool was before the scrape read the last block: idle between requests.
      assert.equal(m.value('ledger_query_pg_pool_idle'), open);
      assert.equal(m.value('ledger_query_pg_pool_in_use'), 0);
      assert.equal(m.value('ledger_query_pg_pool_waiting'), 0);
    } finally {
      await app.close();
      await pgStore.close();
      await fresh.remove();
    }
  });
});

test('an embedded store has no pool to report', async () => {
  const { app, port } = await listening(store);
  try {
    assert.equal((await scrape(port)).value('ledger_query_pg_pool_connections'), undefined);
  } finally {
    await app.close();
  }
});
