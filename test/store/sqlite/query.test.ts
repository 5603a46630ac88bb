/**
 * listOrders and listBundles of the SQLite store against the plain in-memory
 * model of the same blocks (test/support/model.ts): every filter, their
 * combinations, both orderings, both modes, whole walks, and random pages.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Block } from '../../../src/domain/block.js';
import type { BundleFilter, BundleKey, SignerAdded } from '../../../src/domain/bundle.js';
import { STATUS, TIF, TYPE } from '../../../src/domain/enums.js';
import { NETWORK_PARTY, type Order, type OrderFilter, type OrderKey } from '../../../src/domain/order.js';
import type { Page, PageRequest } from '../../../src/domain/page.js';
import type { QueryStore } from '../../../src/store/store.js';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/store.js';
import { encodeOrder } from '../../../src/wire/order-message.js';
import { createModelStore } from '../../support/model.js';
import { block, hex, order, random, tempDatabase, T0 } from '../helpers.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { writeBlocks } from '../../../src/store/store.js';

const rnd = random(20240601);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

const PARTIES = [hex(0xa1), hex(0xa2), hex(0xa3), hex(0xa4), NETWORK_PARTY];
const MARKETS = [hex(0xb1), hex(0xb2), hex(0xb3)];
const REFERENCES = ['', '', '', 'alpha', 'beta', 'gamma"quoted', 'ünïcode'];
const SUBMITTERS = ['0xAbC1', '0xaBc2', '0xABC3'];
const VALIDATORS = [hex(0xc1), hex(0xc2), hex(0xc3)];

/**
 * A random order state. Three orders share each microsecond of createdAt, at
 * different nanoseconds: answers are on the microsecond, so ids break the ties.
 */
function randomOrder(n: number): Order {
  const party = pick(PARTIES);
  const o = order(n, {
    id: n % 4 === 0 ? hex(n * 7919).toUpperCase() : hex(n * 7919),
    partyId: party === NETWORK_PARTY || rnd() < 0.8 ? party : party.toUpperCase(),
    marketId: pick(MARKETS),
    status: pick([STATUS.ACTIVE, STATUS.ACTIVE, STATUS.FILLED, STATUS.FILLED, STATUS.CANCELLED, STATUS.PARKED, STATUS.REJECTED, STATUS.STOPPED, STATUS.EXPIRED, STATUS.PARTIALLY_FILLED]),
    type: party === NETWORK_PARTY ? TYPE.NETWORK : pick([TYPE.LIMIT, TYPE.LIMIT, TYPE.LIMIT, TYPE.MARKET]),
    timeInForce: pick([TIF.GTC, TIF.GTC, TIF.GTT, TIF.IOC, TIF.FOK, TIF.GFA, TIF.GFN]),
    createdAt: T0 + BigInt(Math.floor(n / 3)) * 1000n + BigInt(Math.floor(rnd() * 1000)),
    reference: pick(REFERENCES),
    liquidityProvisionId: rnd() < 0.2 ? hex(0xd0 + (n % 3)) : '',
  });
  if (rnd() < 0.15) o.reason = pick([0, 1, 20, 49]);
  if (rnd() < 0.15) o.peggedOrder = { reference: pick([0, 1, 2, 3]), offset: String(Math.floor(rnd() * 50)) };
  if (rnd() < 0.1) o.icebergOrder = { peakSize: 5n, minimumVisibleSize: 2n, reservedRemaining: 5n };
  return o;
}

function randomBlocks(): Block[] {
  const blocks: Block[] = [];
  const live: Order[] = [];
  let next = 1;
  for (let h = 1; h <= 40; h++) {
    const b = block(h);
    for (let i = 0; i < 8; i++) {
      const o = randomOrder(next++);
      live.push(o);
      b.orders.push(o);
    }
    // Later events for earlier orders: new status, amended version.
    for (let i = 0; i < 4; i++) {
      const o = pick(live);
      b.orders.push({ ...o, status: pick([STATUS.FILLED, STATUS.CANCELLED, STATUS.ACTIVE, STATUS.PARKED]), version: o.version + 1n, remaining: 1n });
    }
    if (h % 3 === 0) {
      // Bundle 30 gets no signatures at all: those go to 0xe000..0xe02c.
      const id = hex((h === 30 ? 0xf000 : 0xe000) + h);
      const added: SignerAdded = {
        signatureId: h % 2 ? id : id.toUpperCase(), validatorId: pick(VALIDATORS), timestamp: T0 + BigInt(h % 5) * 10_000n + BigInt(h),
        newSigner: `0xNew${h}`, submitter: pick(SUBMITTERS), nonce: String(h), epochSeq: BigInt(h % 4),
      };
      b.signersAdded.push(added);
    }
    // Signatures for bundles that exist, will exist later, or never will.
    for (let i = 0; i < 3; i++) {
      b.nodeSignatures.push({ id: hex(0xe000 + Math.floor(rnd() * 45)), sig: Uint8Array.from([Math.floor(rnd() * 256), h]), kind: 3 });
    }
    b.orderMessages = b.orders.map(encodeOrder);
    blocks.push(b);
  }
  return blocks;
}

const blocks = randomBlocks();
const model = createModelStore(blocks);
let store: SqliteStore;

before(async () => {
  const { path } = tempDatabase({ after });
  const writer = await SqliteWriter.open(path);
  for (const b of blocks) await writeBlocks(writer, [b]);
  await writer.close();
  store = openSqliteStore({ path, readOnly: true });
});
after(() => store?.close());

const allOrders = blocks.flatMap((b) => b.orders);
/** The listing keys of every order state, as pages hand them out: createdAt on the microsecond. */
const orderKeys: OrderKey[] = allOrders.map((o) => ({ createdAt: o.createdAt - (o.createdAt % 1000n), id: o.id.toLowerCase() }));
const LOWEST_ID = '0'.repeat(64);
const HIGHEST_ID = 'f'.repeat(64);
const lower = (xs: string[]) => xs.map((x) => x.toLowerCase());

/** One filter per field and a spread of combinations. */
const ORDER_FILTERS: [string, OrderFilter][] = [
  ['none', {}],
  ['statuses', { statuses: [STATUS.ACTIVE] }],
  ['rare statuses', { statuses: [STATUS.REJECTED, STATUS.PARKED] }],
  ['types', { types: [TYPE.NETWORK, TYPE.MARKET] }],
  ['timeInForces', { timeInForces: [TIF.GFA, TIF.GFN, TIF.GTT] }],
  ['excludeLiquidity', { excludeLiquidity: true }],
  ['partyIds', { partyIds: lower([PARTIES[0]!, PARTIES[2]!]) }],
  ['network party', { partyIds: [NETWORK_PARTY] }],
  ['marketIds', { marketIds: [MARKETS[1]!] }],
  ['reference', { reference: 'alpha' }],
  ['empty reference', { reference: '' }],
  ['escaped reference', { reference: 'gamma"quoted' }],
  ['dateRange', { dateRange: { start: T0 + 20_400n, end: T0 + 60_999n } }],
  ['dateRange start', { dateRange: { start: T0 + 90_001n } }],
  ['dateRange end', { dateRange: { end: T0 + 10_500n } }],
  ['empty dateRange', { dateRange: { start: T0 + 10_100n, end: T0 + 10_900n } }],
  ['liveOnly', { liveOnly: true }],
  ['live party', { liveOnly: true, partyIds: [PARTIES[1]!] }],
  ['live market', { liveOnly: true, marketIds: lower([...MARKETS]) }],
  ['live but not live statuses', { liveOnly: true, statuses: [STATUS.FILLED] }],
  ['party and market', { partyIds: [PARTIES[0]!, PARTIES[1]!], marketIds: [MARKETS[0]!] }],
  ['status, type, tif', { statuses: [STATUS.ACTIVE, STATUS.FILLED], types: [TYPE.LIMIT], timeInForces: [TIF.GTC, TIF.IOC] }],
  ['everything', {
    statuses: [STATUS.ACTIVE, STATUS.PARKED, STATUS.FILLED], types: [TYPE.LIMIT], timeInForces: [TIF.GTC, TIF.GTT],
    excludeLiquidity: true, partyIds: lower(PARTIES.slice(0, 3)), marketIds: [MARKETS[0]!, MARKETS[2]!],
    dateRange: { start: T0 + 5_000n, end: T0 + 120_000n }, liveOnly: true,
  }],
  ['reference and party', { reference: 'beta', partyIds: [PARTIES[3]!] }],
  ['empty list', { statuses: [] }],
  ['unknown party', { partyIds: [hex(0xfff)] }],
];

const ORDERINGS = [true, false];

async function same<K>(real: Promise<Page<K>>, expected: Promise<Page<K>>, what: string): Promise<Page<K>> {
  const [r, e] = await Promise.all([real, expected]);
  assert.deepEqual(r, e, what);
  return r;
}

/** Walks every page forward, then back from the end, comparing each page with the model. */
async function walk<K>(
  list: (s: QueryStore, p: PageRequest<K>) => Promise<Page<K>>,
  newestFirst: boolean,
  limit: number,
  what: string,
): Promise<void> {
  const forward: K[] = [];
  let cursor: K | undefined;
  for (let i = 0; ; i++) {
    const req: PageRequest<K> = { newestFirst, mode: 'first', limit, ...(cursor === undefined ? {} : { cursor }) };
    const page = await same(list(store, req), list(model, req), `${what} forward page ${i}`);
    forward.push(...page.rows.map((r) => r.key));
    if (!page.hasNextPage) break;
    cursor = page.rows.at(-1)!.key;
  }
  const backward: K[] = [];
  cursor = undefined;
  for (let i = 0; ; i++) {
    const req: PageRequest<K> = { newestFirst, mode: 'last', limit, ...(cursor === undefined ? {} : { cursor }) };
    const page = await same(list(store, req), list(model, req), `${what} backward page ${i}`);
    backward.unshift(...page.rows.map((r) => r.key));
    if (!page.hasPreviousPage) break;
    cursor = page.rows[0]!.key;
  }
  assert.deepEqual(backward, forward, `${what}: walking back visits the same rows in the same order`);
  assert.equal(new Set(forward.map((k) => JSON.stringify(k, (_, v) => (typeof v === 'bigint' ? String(v) : v)))).size, forward.length);
}

test('the dataset exercises what the filters need', async () => {
  const all = await model.listOrders({}, { newestFirst: true, mode: 'first', limit: 5000 });
  assert.ok(all.rows.length > 300);
  for (const [name, filter] of ORDER_FILTERS) {
    if (['empty dateRange', 'empty list', 'unknown party', 'live but not live statuses'].includes(name)) continue;
    const page = await model.listOrders(filter, { newestFirst: true, mode: 'first', limit: 5000 });
    assert.ok(page.rows.length > 0, `filter ${name} matches something`);
    if (name !== 'none') assert.ok(page.rows.length < all.rows.length, `filter ${name} leaves something out`);
  }
});

for (const [name, filter] of ORDER_FILTERS) {
  test(`orders, ${name}: whole walks forward and backward in both orderings match the model`, async () => {
    const matching = (await model.listOrders(filter, { newestFirst: true, mode: 'first', limit: 5000 })).rows.length;
    // Pages of one row for small results only: the model re-sorts everything on each call.
    const limits = matching <= 60 ? [1, 7, 5000] : [7, 5000];
    for (const newestFirst of ORDERINGS) {
      for (const limit of limits) {
        await walk<OrderKey>((s, p) => s.listOrders(filter, p), newestFirst, limit, `${name} newestFirst=${newestFirst} limit=${limit}`);
      }
    }
  });
}

test('orders: cursors at and beyond both ends, and cursors of rows the filter leaves out', async () => {
  // Oldest first: createdAt ascending, id descending.
  const keys = [...orderKeys].sort((a, b) => (a.createdAt === b.createdAt ? (a.id > b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
  const cursors: OrderKey[] = [
    keys[0]!, keys.at(-1)!, { createdAt: T0 - 1n, id: LOWEST_ID }, { createdAt: T0 + 10_000_000n, id: HIGHEST_ID },
    { createdAt: keys[10]!.createdAt, id: LOWEST_ID }, { createdAt: keys[10]!.createdAt, id: HIGHEST_ID },
    { createdAt: keys[10]!.createdAt + 1n, id: keys[10]!.id },
  ];
  for (const filter of [{}, { statuses: [STATUS.REJECTED] }, { liveOnly: true, partyIds: [PARTIES[1]!] }] as OrderFilter[]) {
    for (const cursor of cursors) {
      for (const newestFirst of ORDERINGS) {
        for (const mode of ['first', 'last'] as const) {
          for (const limit of [1, 3, 5000]) {
            const req: PageRequest<OrderKey> = { newestFirst, mode, limit, cursor };
            await same(store.listOrders(filter, req), model.listOrders(filter, req), `${JSON.stringify(filter)} ${mode} ${newestFirst} ${limit}`);
          }
        }
      }
    }
  }
});

test('orders: the JSON of every current order is exactly what the model prints', async () => {
  const req: PageRequest<OrderKey> = { newestFirst: true, mode: 'first', limit: 5000 };
  const real = await store.listOrders({}, req);
  const expected = await model.listOrders({}, req);
  assert.equal(real.rows.length, expected.rows.length);
  for (let i = 0; i < real.rows.length; i++) assert.equal(real.rows[i]!.json, expected.rows[i]!.json);
  const nodes = real.rows.map((r) => JSON.parse(r.json) as Record<string, unknown>);
  assert.ok(nodes.some((n) => 'reason' in n) && nodes.some((n) => !('reason' in n)));
  assert.ok(nodes.some((n) => n.peggedOrder === null) && nodes.some((n) => n.peggedOrder !== null));
  assert.ok(nodes.some((n) => 'icebergOrder' in n));
  assert.ok(nodes.every((n) => BigInt(n.createdAt as string) % 1000n === 0n), 'createdAt is on the microsecond');
  assert.ok(nodes.every((n) => n.id === (n.id as string).toLowerCase()), 'ids are lowercase');
});

const BUNDLE_FILTERS: [string, BundleFilter][] = [
  ['none', {}],
  ['nodeId', { nodeId: VALIDATORS[0]! }],
  ['submitter', { submitter: SUBMITTERS[1]!.toLowerCase() }],
  ['epochSeq', { epochSeq: 2n }],
  ['nodeId and epochSeq', { nodeId: VALIDATORS[1]!, epochSeq: 1n }],
  ['all three', { nodeId: VALIDATORS[2]!, epochSeq: 3n, submitter: SUBMITTERS[0]!.toLowerCase() }],
  ['no such node', { nodeId: hex(1) }],
];

for (const [name, filter] of BUNDLE_FILTERS) {
  test(`bundles, ${name}: whole walks match the model, signatures included`, async () => {
    for (const newestFirst of ORDERINGS) {
      for (const limit of [1, 2, 100]) {
        await walk<BundleKey>((s, p) => s.listBundles(filter, p), newestFirst, limit, `bundles ${name} ${newestFirst} ${limit}`);
      }
    }
  });
}

test('bundles: packed signatures are present, sorted, and empty when none arrived', async () => {
  const page = await store.listBundles({}, { newestFirst: true, mode: 'first', limit: 100 });
  const signatures = page.rows.map((r) => (JSON.parse(r.json) as { signatures: string }).signatures);
  assert.ok(signatures.some((s) => s === ''));
  assert.ok(signatures.some((s) => s.length > 2 + 4 * 2), 'some bundle has several signatures');
  for (const s of signatures.filter((x) => x !== '')) {
    assert.match(s, /^0x([0-9a-f]{4})+$/);
    const parts = s.slice(2).match(/.{4}/g)!;
    assert.deepEqual(parts, [...parts].sort());
  }
});

/** Random filters and random page requests (cursor anywhere) answer exactly as the model does. */
test('property: random order filters and pages equal the model', async () => {
  const some = <T>(xs: readonly T[]) => fc.option(fc.uniqueArray(fc.constantFrom(...xs), { minLength: 1, maxLength: 3 }), { nil: undefined });
  const time = fc.bigInt({ min: T0 - 2000n, max: T0 + 140_000n });
  const filter = fc.record({
    statuses: some([0, 1, 2, 3, 4, 5, 6, 7, 8]),
    types: some([0, 1, 2, 3]),
    timeInForces: some([0, 1, 2, 3, 4, 5, 6]),
    excludeLiquidity: fc.option(fc.boolean(), { nil: undefined }),
    partyIds: some(lower([...PARTIES])),
    marketIds: some(MARKETS),
    reference: fc.option(fc.constantFrom(...REFERENCES), { nil: undefined, freq: 4 }),
    dateRange: fc.option(fc.record({ start: fc.option(time, { nil: undefined }), end: fc.option(time, { nil: undefined }) }), { nil: undefined }),
    liveOnly: fc.option(fc.boolean(), { nil: undefined }),
  }, { requiredKeys: [] }).map((f) => {
    const clean: OrderFilter = {};
    for (const [k, v] of Object.entries(f)) if (v !== undefined) (clean as Record<string, unknown>)[k] = v;
    return clean;
  });
  const cursor = fc.oneof(
    fc.constantFrom(...orderKeys),
    fc.record({ createdAt: time, id: fc.constantFrom(LOWEST_ID, HIGHEST_ID, ...orderKeys.map((k) => k.id)) }),
  );
  const request = fc.record({
    newestFirst: fc.boolean(),
    mode: fc.constantFrom('first' as const, 'last' as const),
    limit: fc.integer({ min: 1, max: 40 }),
    cursor: fc.option(cursor, { nil: undefined }),
  }).map((r) => {
    const { cursor: c, ...rest } = r;
    return c === undefined ? rest : { ...rest, cursor: c };
  });
  await fc.assert(
    fc.asyncProperty(filter, request, async (f, req) => {
      assert.deepEqual(await store.listOrders(f, req), await model.listOrders(f, req));
    }),
    { numRuns: 400, seed: 7 },
  );
});
