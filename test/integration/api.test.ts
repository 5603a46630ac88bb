/**
 * The real thing end to end: `ledger-query simulate`, `ingest` and `serve` as
 * child processes, queried over HTTP, compared with the reference model served
 * by the same API code over the same events; once per backend.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { runCli, startServe, type RunningServer } from '../support/cli.js';
import { createModelStore } from '../support/model.js';

interface Edge { node: Record<string, unknown>; cursor: string }
interface PageInfo { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string }
interface Connection { edges: Edge[]; pageInfo: PageInfo }

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

const dir = mkdtempSync(join(tmpdir(), 'lq-integration-'));
const file = join(dir, 'sim.events');
let server: RunningServer;
let model: FastifyInstance;
let orders: Order[] = []; // last state of every order

before(async () => {
  const sim = runCli(['simulate', '--out', file, '--blocks', '150', '--seed', '11', '--orders-per-block', '20']);
  assert.equal(sim.status, 0, sim.stderr);
  const blocks = await readBlocks(file);
  const latest = new Map<string, Order>();
  for (const b of blocks) for (const o of b.orders) latest.set(o.id, o);
  orders = [...latest.values()];
  model = await buildApp({ store: createModelStore(blocks) });
});

after(async () => {
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function real(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + path);
  return { status: res.status, body: await res.json() };
}

async function expected(path: string): Promise<{ status: number; body: unknown }> {
  const res = await model.inject({ method: 'GET', url: path });
  return { status: res.statusCode, body: res.json() };
}

function connection(body: unknown, key: 'orders' | 'bundles'): Connection {
  return (body as Record<string, Connection>)[key]!;
}

/** Walks a whole result forward, then backward from its end, checking each page against the model. */
async function walk(path: string, key: 'orders' | 'bundles', size: number): Promise<string[]> {
  const sep = path.includes('?') ? '&' : '?';
  const forward: string[] = [];
  let after = '';
  for (let i = 0; ; i++) {
    const url = `${path}${sep}pagination.first=${size}${after && `&pagination.after=${encodeURIComponent(after)}`}`;
    const [got, want] = await Promise.all([real(url), expected(url)]);
    assert.deepEqual(got, want, `forward page ${i} of ${url}`);
    const c = connection(got.body, key);
    forward.push(...c.edges.map((e) => e.cursor));
    assert.equal(c.pageInfo.hasPreviousPage, i > 0, 'hasPreviousPage going forward');
    if (!c.pageInfo.hasNextPage) break;
    after = c.pageInfo.endCursor;
  }
  const backward: string[] = [];
  let before = '';
  for (let i = 0; ; i++) {
    const url = `${path}${sep}pagination.last=${size}${before && `&pagination.before=${encodeURIComponent(before)}`}`;
    const [got, want] = await Promise.all([real(url), expected(url)]);
    assert.deepEqual(got, want, `backward page ${i} of ${url}`);
    const c = connection(got.body, key);
    backward.unshift(...c.edges.map((e) => e.cursor));
    assert.equal(c.pageInfo.hasNextPage, i > 0, 'hasNextPage going backward');
    if (!c.pageInfo.hasPreviousPage) break;
    before = c.pageInfo.startCursor;
  }
  assert.deepEqual(backward, forward, 'backward walk visits the same rows in the same order');
  assert.equal(new Set(forward).size, forward.length, 'every row exactly once');
  return forward;
}

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

    test('a whole listing, newest and oldest first, forward and backward, equals the model', async () => {
      const newest = await walk(ORDERS, 'orders', 97);
      assert.equal(newest.length, orders.length, 'every order once');
      const oldest = await walk(`${ORDERS}?pagination.newestFirst=false`, 'orders', 250);
      assert.deepEqual(oldest, [...newest].reverse(), 'oldest first is exactly the reverse');
    });

    test('every filter alone and in combination', async () => {
      const byParty = new Map<string, number>();
      for (const o of orders) byParty.set(o.partyId, (byParty.get(o.partyId) ?? 0) + 1);
      const [topParty] = [...byParty.entries()].sort((a, b) => b[1] - a[1])[0]!;
      const someParties = [...byParty.keys()].slice(0, 3);
      const market = orders[0]!.marketId;
      const referenced = orders.find((o) => o.reference !== '')!;
      const times = orders.map((o) => o.createdAt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const t1 = times[Math.floor(times.length / 4)]!;
      const t2 = times[Math.floor((times.length * 3) / 4)]!;
      const shapes = [
        'filter.statuses=STATUS_ACTIVE',
        'filter.statuses=STATUS_REJECTED&filter.statuses=STATUS_PARKED',
        'filter.statuses=STATUS_EXPIRED,STATUS_STOPPED,STATUS_PARTIALLY_FILLED',
        'filter.types=TYPE_NETWORK',
        'filter.types=TYPE_MARKET&filter.types=TYPE_LIMIT',
        'filter.timeInForces=TIME_IN_FORCE_GTT',
        'filter.timeInForces=TIME_IN_FORCE_IOC,TIME_IN_FORCE_FOK',
        'filter.excludeLiquidity=true',
        `filter.partyIds=${topParty}`,
        `filter.partyIds=${someParties.join(',')}`,
        'filter.partyIds=network',
        `filter.marketIds=${market.toUpperCase()}`,
        `filter.reference=${encodeURIComponent(referenced.reference)}`,
        `filter.dateRange.startTimestamp=${t1}`,
        `filter.dateRange.endTimestamp=${t2}`,
        `filter.dateRange.startTimestamp=${t1}&filter.dateRange.endTimestamp=${t2}`,
        'filter.liveOnly=true',
        `filter.liveOnly=true&filter.partyIds=${topParty}`,
        `filter.partyIds=${topParty}&filter.statuses=STATUS_ACTIVE&filter.marketIds=${market}`,
        `filter.marketIds=${market}&filter.types=TYPE_LIMIT&filter.timeInForces=TIME_IN_FORCE_GTC&filter.excludeLiquidity=1`,
        `filter.statuses=STATUS_PARKED&filter.liveOnly=true&filter.dateRange.startTimestamp=${t1}`,
        'filter.statuses=STATUS_FILLED&filter.types=TYPE_NETWORK&filter.timeInForces=TIME_IN_FORCE_GFA',
      ];
      let nonEmpty = 0;
      for (const shape of shapes) {
        for (const order of ['', '&pagination.newestFirst=false']) {
          const rows = await walk(`${ORDERS}?${shape}${order}`, 'orders', 40);
          if (rows.length > 0) nonEmpty++;
        }
      }
      assert.ok(nonEmpty >= shapes.length * 2 - 4, `most filter shapes match something (${nonEmpty})`);
    });

    test('filters keep only matching orders', async () => {
      const { body } = await real(`${ORDERS}?filter.liveOnly=true&pagination.first=5000`);
      const live = connection(body, 'orders').edges.map((e) => e.node);
      const expectedLive = orders.filter((o) =>
        (o.status === STATUS.ACTIVE || o.status === STATUS.PARKED) && o.type === TYPE.LIMIT &&
        o.timeInForce !== TIF.IOC && o.timeInForce !== TIF.FOK);
      assert.equal(live.length, expectedLive.length);
      assert.ok(live.length > 0);
      for (const n of live) {
        assert.ok(['STATUS_ACTIVE', 'STATUS_PARKED'].includes(String(n.status)));
        assert.equal(n.type, 'TYPE_LIMIT');
      }
    });
  });

  describe('bundles', () => {
    test('bundles carry packed signatures, and walk both ways like the model', async () => {
      const { status, body } = await real(`${BUNDLES}?pagination.first=5`);
      assert.equal(status, 200);
      const c = connection(body, 'bundles');
      assert.ok(c.edges.length > 0);
      for (const { node } of c.edges) {
        assert.match(String(node.signatures), /^0x([0-9a-f]{130})+$/);
        assert.match(String(node.timestamp), /^\d+$/);
        assert.match(String(node.epochSeq), /^\d+$/);
      }
      await walk(BUNDLES, 'bundles', 3);
      await walk(`${BUNDLES}?pagination.newestFirst=false`, 'bundles', 4);
    });

    test('nodeId, submitter and epochSeq filters', async () => {
      const blocks = await readBlocks(file);
      const added = blocks.flatMap((b) => b.signersAdded);
      const counts = new Map<string, number>();
      for (const a of added) counts.set(a.validatorId, (counts.get(a.validatorId) ?? 0) + 1);
      const [validator, n] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
      assert.ok(n >= 2, 'a validator added more than once');
      const one = added[0]!;
      for (const q of [
        `nodeId=${validator}`, `node_id=${validator.toUpperCase()}`,
        `submitter=${one.submitter.toUpperCase().replace('0X', '0x')}`, `epochSeq=${one.epochSeq}`,
        `nodeId=${validator}&epoch_seq=${one.epochSeq}`,
      ]) {
        const rows = await walk(`${BUNDLES}?${q}`, 'bundles', 2);
        if (!q.includes('&')) assert.ok(rows.length > 0, q);
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
