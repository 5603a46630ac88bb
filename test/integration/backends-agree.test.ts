/**
 * The same simulated file ingested into both backends answers a fixed set of
 * queries with the same bytes: every filter alone and combined, both
 * orderings, forward and backward, first pages and pages behind a cursor,
 * bundles, and errors; headers included.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import type { Block } from '../../src/domain/block.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

const dir = mkdtempSync(join(tmpdir(), 'lq-agree-'));
const apps: { fresh: FreshStore; store: QueryStore; app: FastifyInstance }[] = [];
let blocks: Block[];

before(async () => {
  const file = join(dir, 'sim.events');
  await writeEventFile(file, { seed: 23, blocks: 120, ordersPerBlock: 20 });
  blocks = await readBlocks(file);
  for (const backend of BACKENDS) {
    const fresh = await backend.fresh(dir, 'agree');
    const writer = await openWriter(fresh.config);
    await ingest(fileSource(file), writer);
    await writer.close();
    const store = await openStore(fresh.config, { readOnly: true });
    apps.push({ fresh, store, app: await buildApp({ store }) });
  }
});

after(async () => {
  for (const { fresh, store, app } of apps) {
    await app.close();
    await store.close();
    await fresh.remove();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Filters built from values the file really holds, so that each matches something. */
function orderFilters(): string[] {
  const orders = blocks.flatMap((b) => b.orders);
  const pick = <T>(xs: T[], i: number) => xs[Math.floor(xs.length * i) % xs.length]!;
  const party = pick(orders, 0.3).partyId;
  const market = pick(orders, 0.6).marketId;
  const reference = orders.find((o) => o.reference !== '')?.reference ?? 'none';
  const times = orders.map((o) => o.createdAt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const [t1, t2] = [pick(times, 0.25), pick(times, 0.7)];
  return [
    '',
    'filter.statuses=STATUS_ACTIVE',
    'filter.statuses=STATUS_FILLED&filter.statuses=STATUS_CANCELLED&filter.statuses=STATUS_PARKED',
    'filter.types=TYPE_NETWORK',
    'filter.types=TYPE_LIMIT&filter.timeInForces=TIME_IN_FORCE_GTC&filter.timeInForces=TIME_IN_FORCE_IOC',
    'filter.timeInForces=TIME_IN_FORCE_GFA',
    `filter.partyIds=${party}`,
    `filter.partyIds=${party}&filter.partyIds=network`,
    `filter.marketIds=${market}`,
    `filter.reference=${encodeURIComponent(reference)}`,
    `filter.dateRange.startTimestamp=${t1}`,
    `filter.dateRange.endTimestamp=${t2}`,
    `filter.dateRange.startTimestamp=${t1}&filter.dateRange.endTimestamp=${t2}`,
    'filter.liveOnly=true',
    'filter.excludeLiquidity=true',
    `filter.liveOnly=true&filter.marketIds=${market}`,
    `filter.partyIds=${party}&filter.marketIds=${market}&filter.statuses=STATUS_FILLED&filter.statuses=STATUS_ACTIVE`,
  ];
}

function bundleFilters(): string[] {
  const added = blocks.flatMap((b) => b.signersAdded);
  const a = added[Math.floor(added.length / 2)]!;
  return ['', `nodeId=${a.validatorId}`, `submitter=${a.submitter}`, `epochSeq=${a.epochSeq}`];
}

interface Reply { status: number; headers: string; body: string }

async function ask(app: FastifyInstance, url: string): Promise<Reply> {
  const res = await app.inject({ url });
  const h = res.headers;
  return {
    status: res.statusCode,
    headers: [h['content-type'], h['x-block-height'], h['x-block-timestamp']].join(' | '),
    body: res.body,
  };
}

/** Asks every backend; they must agree. Returns the (shared) reply. */
async function agree(url: string): Promise<Reply> {
  const [first, ...rest] = await Promise.all(apps.map(({ app }) => ask(app, url)));
  for (const r of rest) assert.deepEqual(r, first, url);
  return first!;
}

/** First and last pages both ways, then one page behind each end's cursor. */
async function pagesOf(path: string, key: 'orders' | 'bundles', filter: string): Promise<number> {
  let asked = 0;
  for (const newestFirst of [true, false]) {
    for (const size of [1, 7, 50]) {
      const base = `${path}?${filter}${filter ? '&' : ''}pagination.newestFirst=${newestFirst}`;
      const first = await agree(`${base}&pagination.first=${size}`);
      const last = await agree(`${base}&pagination.last=${size}`);
      asked += 2;
      assert.equal(first.status, 200, `${base}: ${first.body}`);
      const info = (r: Reply) => (JSON.parse(r.body) as Record<string, { pageInfo: { startCursor: string; endCursor: string } }>)[key]!.pageInfo;
      const after = info(first).endCursor;
      const before = info(last).startCursor;
      if (after) await agree(`${base}&pagination.first=${size}&pagination.after=${encodeURIComponent(after)}`);
      if (before) await agree(`${base}&pagination.last=${size}&pagination.before=${encodeURIComponent(before)}`);
      asked += 2;
    }
  }
  return asked;
}

test('every order filter, both orderings, both directions: the same bytes from both backends', async () => {
  assert.equal(apps.length, BACKENDS.length);
  let asked = 0;
  for (const filter of orderFilters()) asked += await pagesOf(ORDERS, 'orders', filter);
  assert.ok(asked > 300, `${asked} requests`);
  // The whole listing in one page, so that every row's JSON is compared.
  const all = await agree(`${ORDERS}?pagination.first=5000`);
  assert.ok(all.body.length > 100_000, 'the listing holds the simulated orders');
});

test('bundles, every filter, both orderings, both directions: the same bytes from both backends', async () => {
  for (const filter of bundleFilters()) await pagesOf(BUNDLES, 'bundles', filter);
});

test('errors and empty answers: the same bytes from both backends', async () => {
  for (const url of [
    `${ORDERS}?pagination.first=0`,
    `${ORDERS}?filter.statuses=STATUS_NOPE`,
    `${ORDERS}?pagination.after=bm90LWEtY3Vyc29y`,
    `${ORDERS}?filter.partyIds=${'0'.repeat(64)}`,
    `${ORDERS}?filter.liveOnly=true&filter.types=TYPE_MARKET`,
    `${BUNDLES}?epochSeq=18446744073709551615`,
    `${BUNDLES}?epochSeq=x`,
  ]) {
    await agree(url);
  }
});
