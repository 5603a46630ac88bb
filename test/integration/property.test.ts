/**
 * Property: for random filters and random page walks, the API over each
 * backend's store answers exactly what it answers over the plain in-memory
 * model of the same events.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { OrderStatus, OrderType, TimeInForce } from '../../src/domain/enums.js';
import type { Block } from '../../src/domain/block.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { createModelStore } from '../support/model.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-property-'));
/** Per backend: the store the simulated file was ingested into, served. */
const served = new Map<string, { fresh: FreshStore; store: QueryStore; app: FastifyInstance }>();
let model: FastifyInstance;
let blocks: Block[];

before(async () => {
  const file = join(dir, 'sim.events');
  await writeEventFile(file, { seed: 5, blocks: 80, ordersPerBlock: 15 });
  for (const backend of BACKENDS) {
    const fresh = await backend.fresh(dir, 'property');
    const writer = await openWriter(fresh.config);
    await ingest(fileSource(file), writer);
    await writer.close();
    const store = await openStore(fresh.config, { readOnly: true });
    served.set(backend.name, { fresh, store, app: await buildApp({ store }) });
  }
  blocks = await readBlocks(file);
  model = await buildApp({ store: createModelStore(blocks) });
});

after(async () => {
  for (const { fresh, store, app } of served.values()) {
    await app.close();
    await store.close();
    await fresh.remove();
  }
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = (t: { names: readonly (string | undefined)[] }) => t.names.filter((n): n is string => n !== undefined);

function orderQuery() {
  const orders = blocks.flatMap((b) => b.orders);
  const parties = [...new Set(orders.map((o) => o.partyId))];
  const markets = [...new Set(orders.map((o) => o.marketId))];
  const refs = [...new Set(orders.map((o) => o.reference).filter((r) => r !== ''))];
  const times = orders.map((o) => o.createdAt);
  const some = <T>(xs: T[], max = 3) => fc.option(fc.uniqueArray(fc.constantFrom(...xs), { minLength: 1, maxLength: max }), { nil: undefined });
  return fc.record({
    statuses: some(names(OrderStatus)),
    types: some(names(OrderType), 2),
    timeInForces: some(names(TimeInForce)),
    partyIds: some(parties),
    marketIds: some(markets),
    reference: fc.option(fc.constantFrom(...refs), { nil: undefined, freq: 6 }),
    start: fc.option(fc.constantFrom(...times), { nil: undefined }),
    end: fc.option(fc.constantFrom(...times), { nil: undefined }),
    excludeLiquidity: fc.option(fc.boolean(), { nil: undefined }),
    liveOnly: fc.option(fc.boolean(), { nil: undefined }),
    newestFirst: fc.option(fc.boolean(), { nil: undefined }),
  }).map((q) => {
    const p = new URLSearchParams();
    const list = (name: string, xs?: string[]) => xs?.forEach((x) => p.append(name, x));
    list('filter.statuses', q.statuses);
    list('filter.types', q.types);
    list('filter.timeInForces', q.timeInForces);
    list('filter.partyIds', q.partyIds);
    list('filter.marketIds', q.marketIds);
    if (q.reference !== undefined) p.set('filter.reference', q.reference);
    let [start, end] = [q.start, q.end];
    if (start !== undefined && end !== undefined && start > end) [start, end] = [end, start];
    if (start !== undefined) p.set('filter.dateRange.startTimestamp', String(start));
    if (end !== undefined) p.set('filter.dateRange.endTimestamp', String(end));
    if (q.excludeLiquidity !== undefined) p.set('filter.excludeLiquidity', String(q.excludeLiquidity));
    if (q.liveOnly !== undefined) p.set('filter.liveOnly', String(q.liveOnly));
    if (q.newestFirst !== undefined) p.set('pagination.newestFirst', String(q.newestFirst));
    return p;
  });
}

function bundleQuery() {
  const added = blocks.flatMap((b) => b.signersAdded);
  const pick = <T>(xs: T[]) => fc.option(fc.constantFrom(...xs), { nil: undefined });
  return fc.record({
    nodeId: pick([...new Set(added.map((a) => a.validatorId))]),
    submitter: pick([...new Set(added.map((a) => a.submitter))]),
    epochSeq: pick([...new Set(added.map((a) => String(a.epochSeq)))]),
    newestFirst: fc.option(fc.boolean(), { nil: undefined }),
  }).map((q) => {
    const p = new URLSearchParams();
    if (q.nodeId) p.set('nodeId', q.nodeId);
    if (q.submitter) p.set('submitter', q.submitter);
    if (q.epochSeq) p.set('epochSeq', q.epochSeq);
    if (q.newestFirst !== undefined) p.set('pagination.newestFirst', String(q.newestFirst));
    return p;
  });
}

/** A walk: page sizes and directions; each step continues from the previous page's edge. */
const steps = fc.array(fc.record({ size: fc.integer({ min: 1, max: 40 }), backward: fc.boolean() }), { minLength: 1, maxLength: 6 });

async function compareWalk(
  real: FastifyInstance, path: string, key: string, query: URLSearchParams, walk: { size: number; backward: boolean }[],
) {
  let info: { startCursor: string; endCursor: string } | undefined;
  for (const [i, step] of walk.entries()) {
    const p = new URLSearchParams(query);
    p.set(step.backward ? 'pagination.last' : 'pagination.first', String(step.size));
    if (info) {
      const cursor = step.backward ? info.startCursor : info.endCursor;
      if (cursor) p.set(step.backward ? 'pagination.before' : 'pagination.after', cursor);
    }
    const url = `${path}?${p}`;
    const [a, b] = await Promise.all([real.inject({ url }), model.inject({ url })]);
    assert.ok(a.statusCode < 500, `${url}: a server error is never an answer: ${a.body}`);
    assert.equal(a.statusCode, b.statusCode, `${url}: ${a.body}`);
    assert.deepEqual(a.json(), b.json(), `step ${i}: ${url}`);
    if (a.statusCode !== 200) return;
    info = (a.json() as Record<string, { pageInfo: { startCursor: string; endCursor: string } }>)[key]!.pageInfo;
  }
}

for (const backend of BACKENDS) {
  describe(`${backend.name} store`, () => {
    const real = () => served.get(backend.name)!.app;

    test('orders: answers like the model for random filters and walks', async () => {
      await fc.assert(
        fc.asyncProperty(orderQuery(), steps, (q, walk) => compareWalk(real(), '/api/v2/orders', 'orders', q, walk)),
        { numRuns: 150, seed: Number(process.env.PROPERTY_SEED ?? 20261122) },
      );
    });

    test('bundles: answers like the model for random filters and walks', async () => {
      await fc.assert(
        fc.asyncProperty(bundleQuery(), steps, (q, walk) =>
          compareWalk(real(), '/api/v2/erc20/multisigcontrol/signer/added/bundles', 'bundles', q, walk)),
        { numRuns: 80, seed: Number(process.env.PROPERTY_SEED ?? 20261122) },
      );
    });
  });
}
