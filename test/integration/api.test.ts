/**
 * The real thing end to end: `ledger-query simulate`, `ingest` and `serve` as
 * child processes, queried over HTTP; every page of the listings is held to
 * the model's page (test/support/model-pages.ts), which the model builds from
 * its own reading of the same event file. Once per backend.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { runCli, startServe, type RunningServer } from '../support/cli.js';
import { ORDER_STATUS, ORDER_TYPE, TIME_IN_FORCE, enumNumber } from '../support/model-enums.js';
import { readModelBlocks } from '../support/model-events.js';
import { compareWholeListing, fetching, type ModelListing } from '../support/model-pages.js';
import {
  bundleRows, compareBundleKeys, compareOrderKeys, lastBlockOf, orderRows, replay, type ModelState,
} from '../support/model.js';
import type { ModelBundleFilter, ModelBundleKey, ModelOrder, ModelOrderFilter, ModelOrderKey } from '../support/model-types.js';

interface Edge { node: Record<string, unknown>; cursor: string }
interface PageInfo { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string }
interface Connection { edges: Edge[]; pageInfo: PageInfo }

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

const dir = mkdtempSync(join(tmpdir(), 'lq-integration-'));
const file = join(dir, 'sim.events');
let server: RunningServer;
let state: ModelState;
let orders: ModelOrder[] = []; // last state of every order

before(() => {
  const sim = runCli(['simulate', '--out', file, '--blocks', '150', '--seed', '11', '--orders-per-block', '20']);
  assert.equal(sim.status, 0, sim.stderr);
  state = replay(readModelBlocks(file));
  orders = [...state.orders.values()];
});

after(() => rmSync(dir, { recursive: true, force: true }));

async function real(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + path);
  return { status: res.status, body: await res.json() };
}

function connection(body: unknown, key: 'orders' | 'bundles'): Connection {
  return (body as Record<string, Connection>)[key]!;
}

const orderListing = (filter: ModelOrderFilter): ModelListing<ModelOrderKey> =>
  ({ path: ORDERS, key: 'orders', rows: orderRows(state, filter), compare: compareOrderKeys, lastBlock: lastBlockOf(state) });
const bundleListing = (filter: ModelBundleFilter): ModelListing<ModelBundleKey> =>
  ({ path: BUNDLES, key: 'bundles', rows: bundleRows(state, filter), compare: compareBundleKeys, lastBlock: lastBlockOf(state) });

/** Walks a whole listing forward, then backward from its end, each page the model's; returns the rows. */
function walk<K>(listing: ModelListing<K>, query: string, newestFirst: boolean, size: number) {
  return compareWholeListing(fetching(server.url), listing, query, newestFirst, size, `${listing.path}?${query}`);
}

const numbers = (names: readonly (string | undefined)[], ...picked: string[]) => picked.map((n) => enumNumber(names, n));

/** The suites every backend must pass, against `server`. */
function suites(): void {
  describe('orders', () => {
    test('the README example: two active orders in the documented JSON', async () => {
      const { status, body } = await real(`${ORDERS}?pagination.first=2&filter.statuses=STATUS_ACTIVE`);
      assert.equal(status, 200);
      const c = connection(body, 'orders');
      assert.equal(c.edges.length, 2);
      for (const { node } of c.edges) {
        assert.equal(node.status, 'STATUS_ACTIVE');
        assert.match(String(node.id), /^[0-9a-f]{64}$/);
        assert.match(String(node.createdAt), /^\d+$/);
        assert.equal(typeof node.size, 'string');
        assert.equal(typeof node.postOnly, 'boolean');
        assert.ok(!('reason' in node), 'no reason on an active order');
      }
      assert.equal(c.pageInfo.hasNextPage, true);
      assert.equal(c.pageInfo.hasPreviousPage, false);
      assert.equal(c.pageInfo.startCursor, c.edges[0]!.cursor);
      assert.equal(c.pageInfo.endCursor, c.edges[1]!.cursor);
    });

    test('a whole listing, newest and oldest first, forward and backward, is the model\'s', async () => {
      const newest = await walk(orderListing({}), '', true, 97);
      assert.equal(newest.length, orders.length, 'every order once');
      const oldest = await walk(orderListing({}), 'pagination.newestFirst=false', false, 250);
      assert.deepEqual(oldest.map((r) => r.key), newest.map((r) => r.key).reverse(), 'oldest first is exactly the reverse');
    });

    test('every filter alone and in combination, as clients spell them', async () => {
      const byParty = new Map<string, number>();
      for (const o of orders) byParty.set(o.partyId, (byParty.get(o.partyId) ?? 0) + 1);
      const [topParty] = [...byParty.entries()].sort((a, b) => b[1] - a[1])[0]!;
      const someParties = [...byParty.keys()].slice(0, 3);
      const market = orders[0]!.marketId;
      const referenced = orders.find((o) => o.reference !== '')!;
      const times = orders.map((o) => o.createdAt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const t1 = times[Math.floor(times.length / 4)]!;
      const t2 = times[Math.floor((times.length * 3) / 4)]!;
      const statuses = (...n: string[]) => numbers(ORDER_STATUS, ...n);
      const types = (...n: string[]) => numbers(ORDER_TYPE, ...n);
      const tifs = (...n: string[]) => numbers(TIME_IN_FORCE, ...n);
      // Each query as a client writes it, and what it means.
      const shapes: [string, ModelOrderFilter][] = [
        ['filter.statuses=STATUS_ACTIVE', { statuses: statuses('STATUS_ACTIVE') }],
        ['filter.statuses=STATUS_REJECTED&filter.statuses=STATUS_PARKED', { statuses: statuses('STATUS_REJECTED', 'STATUS_PARKED') }],
        ['filter.statuses=STATUS_EXPIRED,STATUS_STOPPED,STATUS_PARTIALLY_FILLED', { statuses: statuses('STATUS_EXPIRED', 'STATUS_STOPPED', 'STATUS_PARTIALLY_FILLED') }],
        ['filter.types=TYPE_NETWORK', { types: types('TYPE_NETWORK') }],
        ['filter.types=TYPE_MARKET&filter.types=TYPE_LIMIT', { types: types('TYPE_MARKET', 'TYPE_LIMIT') }],
        ['filter.timeInForces=TIME_IN_FORCE_GTT', { timeInForces: tifs('TIME_IN_FORCE_GTT') }],
        ['filter.timeInForces=TIME_IN_FORCE_IOC,TIME_IN_FORCE_FOK', { timeInForces: tifs('TIME_IN_FORCE_IOC', 'TIME_IN_FORCE_FOK') }],
        ['filter.excludeLiquidity=true', { excludeLiquidity: true }],
        [`filter.partyIds=${topParty}`, { partyIds: [topParty] }],
        [`filter.partyIds=${someParties.join(',')}`, { partyIds: someParties }],
        ['filter.partyIds=network', { partyIds: ['network'] }],
        [`filter.marketIds=${market.toUpperCase()}`, { marketIds: [market] }],
        [`filter.reference=${encodeURIComponent(referenced.reference)}`, { reference: referenced.reference }],
        [`filter.dateRange.startTimestamp=${t1}`, { dateRange: { start: t1 } }],
        [`filter.dateRange.endTimestamp=${t2}`, { dateRange: { end: t2 } }],
        [`filter.dateRange.startTimestamp=${t1}&filter.dateRange.endTimestamp=${t2}`, { dateRange: { start: t1, end: t2 } }],
        ['filter.liveOnly=true', { liveOnly: true }],
        [`filter.liveOnly=true&filter.partyIds=${topParty}`, { liveOnly: true, partyIds: [topParty] }],
        [`filter.partyIds=${topParty}&filter.statuses=STATUS_ACTIVE&filter.marketIds=${market}`,
          { partyIds: [topParty], statuses: statuses('STATUS_ACTIVE'), marketIds: [market] }],
        [`filter.marketIds=${market}&filter.types=TYPE_LIMIT&filter.timeInForces=TIME_IN_FORCE_GTC&filter.excludeLiquidity=1`,
          { marketIds: [market], types: types('TYPE_LIMIT'), timeInForces: tifs('TIME_IN_FORCE_GTC'), excludeLiquidity: true }],
        [`filter.statuses=STATUS_PARKED&filter.liveOnly=true&filter.dateRange.startTimestamp=${t1}`,
          { statuses: statuses('STATUS_PARKED'), liveOnly: true, dateRange: { start: t1 } }],
        ['filter.statuses=STATUS_FILLED&filter.types=TYPE_NETWORK&filter.timeInForces=TIME_IN_FORCE_GFA',
          { statuses: statuses('STATUS_FILLED'), types: types('TYPE_NETWORK'), timeInForces: tifs('TIME_IN_FORCE_GFA') }],
      ];
      let nonEmpty = 0;
      for (const [query, filter] of shapes) {
        const listing = orderListing(filter);
        if (listing.rows.length > 0) nonEmpty++;
        await walk(listing, query, true, 40);
        await walk(listing, `${query}&pagination.newestFirst=false`, false, 40);
      }
      assert.ok(nonEmpty >= shapes.length - 2, `most filter shapes match something (${nonEmpty} of ${shapes.length})`);
    });

    test('filters keep only matching orders', async () => {
      const { body } = await real(`${ORDERS}?filter.liveOnly=true&pagination.first=5000`);
      const live = connection(body, 'orders').edges.map((e) => e.node);
      assert.equal(live.length, orderRows(state, { liveOnly: true }).length);
      assert.ok(live.length > 0);
      for (const n of live) {
        assert.ok(['STATUS_ACTIVE', 'STATUS_PARKED'].includes(String(n.status)), String(n.status));
        assert.equal(n.type, 'TYPE_LIMIT');
        assert.ok(!['TIME_IN_FORCE_IOC', 'TIME_IN_FORCE_FOK'].includes(String(n.timeInForce)), String(n.timeInForce));
      }
    });
  });

  describe('bundles', () => {
    test('bundles carry packed signatures, and walk both ways as the model does', async () => {
      const { status, body } = await real(`${BUNDLES}?pagination.first=5`);
      assert.equal(status, 200);
      const c = connection(body, 'bundles');
      assert.equal(c.edges.length, 5);
      for (const { node } of c.edges) {
        assert.match(String(node.signatures), /^0x([0-9a-f]{130})+$/);
        assert.match(String(node.timestamp), /^\d+$/);
        assert.match(String(node.epochSeq), /^\d+$/);
      }
      await walk(bundleListing({}), '', true, 3);
      await walk(bundleListing({}), 'pagination.newestFirst=false', false, 4);
    });

    test('nodeId, submitter and epochSeq filters, in either spelling and case', async () => {
      const added = [...state.bundles.values()];
      const counts = new Map<string, number>();
      for (const a of added) counts.set(a.validatorId, (counts.get(a.validatorId) ?? 0) + 1);
      const [validator, n] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
      assert.ok(n >= 2, 'a validator added more than once');
      const one = added[0]!;
      const cases: [string, ModelBundleFilter][] = [
        [`nodeId=${validator}`, { nodeId: validator }],
        [`node_id=${validator.toUpperCase()}`, { nodeId: validator }],
        [`submitter=${one.submitter.toUpperCase().replace('0X', '0x')}`, { submitter: one.submitter }],
        [`epochSeq=${one.epochSeq}`, { epochSeq: one.epochSeq }],
        [`nodeId=${validator}&epoch_seq=${one.epochSeq}`, { nodeId: validator, epochSeq: one.epochSeq }],
      ];
      for (const [query, filter] of cases) {
        const rows = await walk(bundleListing(filter), query, true, 2);
        if (!query.includes('&')) assert.ok(rows.length > 0, query);
      }
      const { body } = await real(`${BUNDLES}?nodeId=${validator}`);
      assert.equal(connection(body, 'bundles').edges.length, n);
    });
  });

  describe('bad input', () => {
    const cases: [string, string, RegExp][] = [
      [ORDERS, 'pagination.first=abc', /pagination\.first.*abc/],
      [ORDERS, 'pagination.first=0', /pagination\.first/],
      [ORDERS, 'pagination.last=5001', /pagination\.last.*5001/],
      [ORDERS, 'pagination.first=2&pagination.last=2', /first.*last|last.*first/],
      [ORDERS, 'pagination.after=x&pagination.before=y', /after.*before|before.*after/],
      [ORDERS, 'pagination.after=garbled', /pagination\.after/],
      [ORDERS, 'filter.statuses=STATUS_BOGUS', /filter\.statuses.*STATUS_BOGUS/],
      [ORDERS, 'filter.types=99', /filter\.types.*99/],
      [ORDERS, 'filter.partyIds=abc', /filter\.partyIds.*abc/],
      [ORDERS, 'filter.marketIds=' + 'g'.repeat(64), /filter\.marketIds/],
      [ORDERS, 'filter.liveOnly=maybe', /filter\.liveOnly.*maybe/],
      [ORDERS, 'filter.dateRange.startTimestamp=yesterday', /startTimestamp.*yesterday/],
      [ORDERS, 'pagination.newestFirst=yes', /newestFirst.*yes/],
      [BUNDLES, 'epochSeq=1.5', /epochSeq.*1\.5/],
      [BUNDLES, 'nodeId=xyz', /nodeId.*xyz/],
      [BUNDLES, 'pagination.first=-1', /pagination\.first.*-1/],
    ];
    for (const [path, query, message] of cases) {
      test(`${path.split('/').pop()} ?${query} is a 400 naming the parameter`, async () => {
        const { status, body } = await real(`${path}?${query}`);
        assert.equal(status, 400);
        const b = body as { code: number; message: string; details: { '@type': string; code: number }[] };
        assert.equal(b.code, 3);
        assert.match(b.message, message);
        assert.equal(b.details[0]?.['@type'], 'type.googleapis.com/vega.ErrorDetail');
        assert.equal(typeof b.details[0]?.code, 'number');
      });
    }

    test('a cursor of the other endpoint is a 400', async () => {
      const { body } = await real(`${BUNDLES}?pagination.first=1`);
      const cursor = connection(body, 'bundles').pageInfo.endCursor;
      const res = await real(`${ORDERS}?pagination.after=${encodeURIComponent(cursor)}`);
      assert.equal(res.status, 400);
    });
  });

  describe('transport', () => {
    test('gzip when accepted, pretty when asked, health', async () => {
      const plain = await fetch(`${server.url}${ORDERS}?pagination.first=20`);
      const text = await plain.text();
      const zipped = await fetch(`${server.url}${ORDERS}?pagination.first=20`, { headers: { 'accept-encoding': 'gzip' } });
      // fetch decodes gzip itself; the header proves it was sent compressed.
      assert.equal(zipped.headers.get('content-encoding'), 'gzip');
      assert.equal(await zipped.text(), text);
      const pretty = await (await fetch(`${server.url}${ORDERS}?pagination.first=1&pretty`)).text();
      assert.match(pretty, /\n {2}"orders": \{/);
      assert.deepEqual(JSON.parse(pretty).orders.edges[0], JSON.parse(text).orders.edges[0]);
      const health = await fetch(`${server.url}/health`);
      assert.equal(health.status, 200);
    });
  });
}

for (const backend of BACKENDS) {
  describe(`${backend.name} store`, () => {
    let fresh: FreshStore | undefined;
    before(async () => {
      fresh = await backend.fresh(dir, 'api');
      const ing = runCli(['ingest', file, ...fresh.args]);
      assert.equal(ing.status, 0, ing.stderr);
      server = await startServe(fresh.args);
    });
    after(async () => {
      await server?.stop();
      await fresh?.remove();
    });
    suites();
  });
}
