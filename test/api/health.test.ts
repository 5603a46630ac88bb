/**
 * GET /health tells the truth: 503 with the reason when the store cannot be
 * read, or ingestion failed, stalled or cannot say how it goes (its body
 * unchanged when healthy); GET /ready also fails while the last block is older than
 * the lag allowed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { HEALTH_PATH, healthRoute, READY_PATH } from '../../src/api/health-route.js';
import { DatabaseUnreachableError } from '../../src/errors.js';
import { startingStatus, type IngestStatus } from '../../src/domain/ingest-status.js';
import type { QueryStore } from '../../src/store/store.js';
import { buildApp, type AppOptions } from '../../src/api/app.js';
import { createModelStore } from '../support/model.js';
import { get, makeBlock } from './fixtures.js';

const SECOND = 1_000_000_000n;
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/** A block whose time is `agoSeconds` before now. */
const recentBlock = (height: number, agoSeconds: number) => ({ ...makeBlock(height), time: nowNs() - BigInt(agoSeconds) * SECOND });

async function app(options: Omit<AppOptions, 'store'> & { store?: QueryStore }) {
  return buildApp({ store: createModelStore([recentBlock(1, 5)]), ...options });
}

const running = (): IngestStatus => ({ ...startingStatus('file:///events'), role: 'writer', state: 'running' });

test('healthy: 200 with the same body as ever, with a source running or finished', async () => {
  for (const status of [undefined, running(), { ...running(), state: 'finished' as const }]) {
    const server = await app(status === undefined ? {} : { ingestStatus: () => status });
    const reply = await get(server, '/health');
    assert.equal(reply.status, 200);
    assert.deepEqual(Object.keys(reply.json as object), ['status', 'lastBlock']);
    assert.equal((reply.json as { status: string }).status, 'ok');
    await server.close();
  }
});

test('ingestion that failed (a source that is missing or corrupt) makes /health and /ready 503, saying why', async () => {
  const failed: IngestStatus = { ...running(), state: 'failed', error: 'file:///events: no such file' };
  const server = await app({ ingestStatus: () => failed });
  for (const path of ['/health', '/ready']) {
    const reply = await get(server, path);
    assert.equal(reply.status, 503, path);
    const body = reply.json as { status: string; reason: string; lastBlock: { height: string } };
    assert.equal(body.status, 'unavailable');
    assert.equal(body.reason, 'ingestion failed: file:///events: no such file');
    assert.equal(body.lastBlock.height, '1', 'the last block is still said');
  }
  await server.close();
});

test('ingestion whose status cannot be had (the primary process silent) is unhealthy', async () => {
  const server = await app({ ingestStatus: () => Promise.reject(new Error('the primary process did not say')) });
  const reply = await get(server, '/health');
  assert.equal(reply.status, 503);
  assert.match((reply.json as { reason: string }).reason, /ingestion's status is unknown: the primary process did not say/);
  await server.close();
});

test('a store that cannot be read makes /health 503, naming the kind of fault and not the server', async () => {
  const store: QueryStore = {
    ...createModelStore([]),
    lastBlock: () => Promise.reject(new DatabaseUnreachableError('cannot reach PostgreSQL at postgres://u:***@db.internal:5432/x')),
  };
  const server = await app({ store });
  const reply = await get(server, '/health');
  assert.equal(reply.status, 503);
  assert.equal((reply.json as { reason: string }).reason, 'the store cannot be read (LQ_DATABASE_UNREACHABLE; the log says more)');
  assert.ok(!reply.body.includes('db.internal'));
  await server.close();
});

test('/ready: 200 within the lag allowed, 503 past it or with no block, and never for lag when the check is off', async () => {
  const fresh = await app({ http: { readyMaxLagSeconds: 60 } });
  const ok = await get(fresh, '/ready');
  assert.equal(ok.status, 200, ok.body);
  assert.equal((ok.json as { status: string }).status, 'ready');
  assert.ok((ok.json as { lagSeconds: number }).lagSeconds < 60);
  await fresh.close();

  const stale = await app({ store: createModelStore([recentBlock(1, 600)]), http: { readyMaxLagSeconds: 60 } });
  const lagging = await get(stale, '/ready');
  assert.equal(lagging.status, 503);
  assert.match((lagging.json as { reason: string }).reason, /^the last block is 6\d\d\.\d s old, more than the 60 s allowed/);
  assert.equal((await get(stale, '/health')).status, 200, 'lagging is not unhealthy');
  await stale.close();

  const empty = await app({ store: createModelStore([]), http: { readyMaxLagSeconds: 60 } });
  assert.equal((await get(empty, '/ready')).status, 503);
  await empty.close();

  const off = await app({ store: createModelStore([recentBlock(1, 600)]), http: { readyMaxLagSeconds: 0 } });
  assert.equal((await get(off, '/ready')).status, 200);
  await off.close();
});

test('a running source that reads nothing for longer than --ready-max-lag makes /health 503, saying so; reading again makes it 200', async () => {
  let now = 1_000_000;
  let status: IngestStatus = { ...running(), source: 'socket://0.0.0.0:3005', events: 500, readAt: now };
  const server = Fastify();
  await server.register(healthRoute, {
    store: createModelStore([recentBlock(1, 5)]), ingestStatus: () => status, readyMaxLagSeconds: 60, clock: () => now,
  });
  const health = async () => {
    const reply = await server.inject(HEALTH_PATH);
    return { status: reply.statusCode, body: reply.json<{ status: string; reason?: string }>() };
  };
  assert.equal((await health()).status, 200);
  now += 60_000;
  assert.equal((await health()).status, 200, 'still for 60 s: as much as allowed');
  now += 1_000;
  const stalled = await health();
  assert.equal(stalled.status, 503);
  assert.equal(stalled.body.status, 'unavailable');
  assert.match(stalled.body.reason ?? '', /^ingestion stalled: nothing read from socket:\/\/0\.0\.0\.0:3005 for 61 s, more than the 60 s allowed \(--ready-max-lag\)$/);
  assert.equal((await server.inject(READY_PATH)).statusCode, 503, '/ready too');
  status = { ...status, events: 501, readAt: now };
  assert.equal((await health()).status, 200, 'reading again');
  // A source that has finished, or a standby waiting for the writer's lock, is not stalled however long it is still.
  for (const still of [{ ...status, state: 'finished' as const }, { ...status, role: 'standby' as const }]) {
    status = still;
    now += 3_600_000;
    assert.equal((await health()).status, 200, `${still.state} ${still.role}`);
  }
  await server.close();
});

test('with --ready-max-lag 0, a still source never makes /health fail', async () => {
  let now = 0;
  const server = Fastify();
  await server.register(healthRoute, {
    store: createModelStore([recentBlock(1, 5)]), ingestStatus: () => ({ ...running(), readAt: 0 }), readyMaxLagSeconds: 0, clock: () => now,
  });
  assert.equal((await server.inject(HEALTH_PATH)).statusCode, 200);
  now += 86_400_000;
  assert.equal((await server.inject(HEALTH_PATH)).statusCode, 200);
  await server.close();
});
