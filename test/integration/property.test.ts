/**
 * Property: for random filters and random page walks, the API over each
 * backend's store answers, byte for byte, the pages of the model
 * (test/support/model.ts) of the same event file. The model reads the file
 * itself (model-events.ts) and builds each page from the rules of
 * docs/compatibility.md (model-pages.ts): none of our decoding, parameter
 * reading, cursors or JSON is on its side, so a mistake in any of them shows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { ORDER_STATUS, ORDER_TYPE, TIME_IN_FORCE } from '../support/model-enums.js';
import { readModelBlocks } from '../support/model-events.js';
import { compareWalk, injecting, type Step } from '../support/model-pages.js';
import { bundleRows, compareBundleKeys, compareOrderKeys, lastBlockOf, orderRows, replay, type ModelState } from '../support/model.js';
import type { ModelBundleFilter, ModelOrderFilter } from '../support/model-types.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

const dir = mkdtempSync(join(tmpdir(), 'lq-property-'));
/** Per backend: the store the simulated file was ingested into, served. */
const served = new Map<string, { fresh: FreshStore; store: QueryStore; app: FastifyInstance }>();
let state: ModelState;

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
  state = replay(readModelBlocks(file));
  assert.ok(state.orders.size > 500 && state.bundles.size > 5, `a network worth walking: ${state.orders.size} orders, ${state.bundles.size} bundles`);
});

after(async () => {
  for (const { fresh, store, app } of served.values()) {
    await app.close();
    await store.close();
    await fresh.remove();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A query as the model means it, and as a client spells it. */
interface Query<F> {
  filter: F;
  newestFirst: boolean;
  params: URLSearchParams;
}

/** Some of `xs`, or none (no filter); each picked value is the index into `xs`. */
const some = <T>(xs: readonly T[], max = 3) =>
  fc.option(fc.uniqueArray(fc.integer({ min: 0, max: xs.length - 1 }), { minLength: 1, maxLength: max }), { nil: undefined });

/** Whether newestFirst is given, and as what: the default is newest first (section 2.2). */
const newestFirstArb = fc.option(fc.boolean(), { nil: undefined });

function orderQuery(): fc.Arbitrary<Query<ModelOrderFilter>> {
  const orders = [...state.orders.values()];
  const parties = [...new Set(orders.map((o) => o.partyId))];
  const markets = [...new Set(orders.map((o) => o.marketId))];
  const refs = [...new Set(orders.map((o) => o.reference).filter((r) => r !== ''))];
  const times = orders.map((o) => o.createdAt);
  const named = (names: readonly string[], picked?: number[]) => picked?.map((n) => names[n]!);
  return fc.record({
    statuses: some(ORDER_STATUS),
    types: some(ORDER_TYPE, 2),
    timeInForces: some(TIME_IN_FORCE),
    partyIds: some(parties),
    marketIds: some(markets),
    reference: fc.option(fc.constantFrom(...refs), { nil: undefined, freq: 6 }),
    start: fc.option(fc.constantFrom(...times), { nil: undefined }),
    end: fc.option(fc.constantFrom(...times), { nil: undefined }),
    excludeLiquidity: fc.option(fc.boolean(), { nil: undefined }),
    liveOnly: fc.option(fc.boolean(), { nil: undefined }),
    newestFirst: newestFirstArb,
  }).map((q) => {
    let [start, end] = [q.start, q.end];
    if (start !== undefined && end !== undefined && start > end) [start, end] = [end, start];
    const filter: ModelOrderFilter = {
      statuses: q.statuses, types: q.types, timeInForces: q.timeInForces,
      partyIds: q.partyIds?.map((i) => parties[i]!), marketIds: q.marketIds?.map((i) => markets[i]!),
      reference: q.reference, excludeLiquidity: q.excludeLiquidity, liveOnly: q.liveOnly,
      dateRange: start === undefined && end === undefined ? undefined : { start, end },
    };
    const p = new URLSearchParams();
    const list = (name: string, xs?: string[]) => xs?.forEach((x) => p.append(name, x));
    list('filter.statuses', named(ORDER_STATUS, q.statuses));
    list('filter.types', named(ORDER_TYPE, q.types));
    list('filter.timeInForces', named(TIME_IN_FORCE, q.timeInForces));
    list('filter.partyIds', filter.partyIds);
    list('filter.marketIds', filter.marketIds);
    if (q.reference !== undefined) p.set('filter.reference', q.reference);
    if (start !== undefined) p.set('filter.dateRange.startTimestamp', String(start));
    if (end !== undefined) p.set('filter.dateRange.endTimestamp', String(end));
    if (q.excludeLiquidity !== undefined) p.set('filter.excludeLiquidity', String(q.excludeLiquidity));
    if (q.liveOnly !== undefined) p.set('filter.liveOnly', String(q.liveOnly));
    if (q.newestFirst !== undefined) p.set('pagination.newestFirst', String(q.newestFirst));
    return { filter, newestFirst: q.newestFirst ?? true, params: p };
  });
}

function bundleQuery(): fc.Arbitrary<Query<ModelBundleFilter>> {
  const added = [...state.bundles.values()];
  const pick = <T>(xs: T[]) => fc.option(fc.constantFrom(...xs), { nil: undefined });
  return fc.record({
    nodeId: pick([...new Set(added.map((a) => a.validatorId))]),
    submitter: pick([...new Set(added.map((a) => a.submitter))]),
    epochSeq: pick([...new Set(added.map((a) => a.epochSeq))]),
    newestFirst: newestFirstArb,
  }).map((q) => {
    const p = new URLSearchParams();
    if (q.nodeId !== undefined) p.set('nodeId', q.nodeId);
    if (q.submitter !== undefined) p.set('submitter', q.submitter);
    if (q.epochSeq !== undefined) p.set('epochSeq', String(q.epochSeq));
    if (q.newestFirst !== undefined) p.set('pagination.newestFirst', String(q.newestFirst));
    return { filter: { nodeId: q.nodeId, submitter: q.submitter, epochSeq: q.epochSeq }, newestFirst: q.newestFirst ?? true, params: p };
  });
}

/** A walk: page sizes and directions; each step continues from the previous page's edge. */
const steps: fc.Arbitrary<Step[]> = fc.array(fc.record({ size: fc.integer({ min: 1, max: 40 }), backward: fc.boolean() }), { minLength: 1, maxLength: 6 });

const SEED = Number(process.env.PROPERTY_SEED ?? 20261122);

for (const backend of BACKENDS) {
  describe(`${backend.name} store`, () => {
    const ask = () => injecting(served.get(backend.name)!.app);

    test('orders: every page of random filters and walks is the model\'s', async () => {
      await fc.assert(
        fc.asyncProperty(orderQuery(), steps, async (q, walk) => {
          const listing = { path: ORDERS, key: 'orders', rows: orderRows(state, q.filter), compare: compareOrderKeys, lastBlock: lastBlockOf(state) } as const;
          await compareWalk(ask(), listing, q.params.toString(), q.newestFirst, walk);
        }),
        { numRuns: 150, seed: SEED },
      );
    });

    test('bundles: every page of random filters and walks is the model\'s', async () => {
      await fc.assert(
        fc.asyncProperty(bundleQuery(), steps, async (q, walk) => {
          const listing = { path: BUNDLES, key: 'bundles', rows: bundleRows(state, q.filter), compare: compareBundleKeys, lastBlock: lastBlockOf(state) } as const;
          await compareWalk(ask(), listing, q.params.toString(), q.newestFirst, walk);
        }),
        { numRuns: 80, seed: SEED },
      );
    });
  });
}
