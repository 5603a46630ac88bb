/**
 * A pruned store over HTTP: `ingest --retention W` through the real command,
 * then `serve`, asked every endpoint; each answer held to what the model
 * keeps under the rules of docs/compatibility.md section 13
 * (test/support/model-retention.ts), the model reading the event file itself
 * and building its own pages (test/support/model-pages.ts). On the real
 * recording (its blocks span ~12 minutes of network time) and on a simulated
 * network with amendments, once per backend.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BACKENDS, type Backend, type FreshStore } from '../support/backends.js';
import { runCli, startServe, type RunningServer } from '../support/cli.js';
import { streamSnapshot } from '../support/copy-answers.js';
import { ORDER_STATUS, enumNumber } from '../support/model-enums.js';
import { readModelBlocks } from '../support/model-events.js';
import { compareWholeListing, fetching, type ModelListing } from '../support/model-pages.js';
import { retain } from '../support/model-retention.js';
import type { ModelBundleFilter, ModelBundleKey, ModelOrderFilter, ModelOrderKey, ModelVersionKey } from '../support/model-types.js';
import {
  bundleRows, compareBundleKeys, compareOrderKeys, compareVersionKeys, lastBlockOf, orderJson, orderRows, orderVersions,
  removedBundleRows, replay, versionRows, type ModelState,
} from '../support/model.js';
import { realRecording } from '../support/real-recording.js';

const ORDERS = '/api/v2/orders';
const ADDED = '/api/v2/erc20/multisigcontrol/signer/added/bundles';
const REMOVED = '/api/v2/erc20/multisigcontrol/signer/removed/bundles';
const NS = { s: 1_000_000_000n, m: 60_000_000_000n } as const;

const dir = mkdtempSync(join(tmpdir(), 'lq-retention-answers-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

async function get(server: RunningServer, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(server.url + path);
  return { status: res.status, body: await res.text() };
}

/** What the window forgot of `everything`: a test that forgets nothing would show nothing. */
function forgotten(everything: ModelState, kept: ModelState) {
  const [all, left] = [orderVersions(everything), orderVersions(kept)];
  return {
    orders: [...everything.orders.keys()].filter((id) => !kept.orders.has(id)),
    versions: [...left].filter(([id, v]) => v.size < all.get(id)!.size).map(([id]) => id),
  };
}

/** Every endpoint of `server` against the model's `kept` state; `everything` names what was forgotten. */
async function assertServedAsKept(server: RunningServer, everything: ModelState, kept: ModelState, what: string): Promise<void> {
  const ask = fetching(server.url);
  const last = lastBlockOf(kept);
  const orders = (filter: ModelOrderFilter): ModelListing<ModelOrderKey> =>
    ({ path: ORDERS, key: 'orders', rows: orderRows(kept, filter), compare: compareOrderKeys, lastBlock: last });
  const bundles = (path: string, rows: ModelListing<ModelBundleKey>['rows']): ModelListing<ModelBundleKey> =>
    ({ path, key: 'bundles', rows, compare: compareBundleKeys, lastBlock: last });
  const some = [...kept.orders.values()];
  const market = some[0]?.marketId ?? '';
  const party = some.at(-1)?.partyId ?? '';
  const shapes: [string, ModelOrderFilter][] = [
    ['', {}],
    ['filter.liveOnly=true', { liveOnly: true }],
    ['filter.statuses=STATUS_ACTIVE', { statuses: [enumNumber(ORDER_STATUS, 'STATUS_ACTIVE')] }],
    ['filter.statuses=STATUS_FILLED,STATUS_CANCELLED', { statuses: [enumNumber(ORDER_STATUS, 'STATUS_FILLED'), enumNumber(ORDER_STATUS, 'STATUS_CANCELLED')] }],
    [`filter.marketIds=${market}`, { marketIds: [market] }],
    [`filter.partyIds=${party}`, { partyIds: [party] }],
  ];
  for (const [query, filter] of shapes) {
    const and = query === '' ? '' : '&';
    await compareWholeListing(ask, orders(filter), query, true, 7, `${what}: ${ORDERS}?${query}`);
    await compareWholeListing(ask, orders(filter), `${query}${and}pagination.newestFirst=false`, false, 7, `${what}: ${ORDERS}?${query} oldest first`);
  }
  const bundleFilter: ModelBundleFilter = {};
  await compareWholeListing(ask, bundles(ADDED, bundleRows(kept, bundleFilter)), '', true, 3, `${what}: added bundles`);
  await compareWholeListing(ask, bundles(REMOVED, removedBundleRows(kept, bundleFilter)), '', true, 3, `${what}: removed bundles`);

  // One order and its versions: the kept ones as the model prints them, the forgotten ones gone.
  const versions = orderVersions(kept);
  for (const [id, order] of everything.orders) {
    const one = await get(server, `/api/v2/order/${id}`);
    const keptOrder = kept.orders.get(id);
    if (keptOrder === undefined) {
      assert.equal(one.status, 404, `${what}: a forgotten order ${id}: ${one.body}`);
      assert.match(one.body, /order not found/, `${what}: ${id}`);
    } else {
      assert.deepEqual(one, { status: 200, body: `{"order":${orderJson(keptOrder)}}` }, `${what}: order ${id}`);
    }
    const listing: ModelListing<ModelVersionKey> = {
      path: `/api/v2/order/versions/${id}`, key: 'orders', rows: versionRows(kept, id), compare: compareVersionKeys, lastBlock: last,
    };
    await compareWholeListing(ask, listing, '', true, 2, `${what}: versions of ${id}`);
    for (let version = 1n; version <= order.version; version++) {
      const at = await get(server, `/api/v2/order/${id}?version=${version}`);
      const state = versions.get(id)?.get(version);
      if (state === undefined) assert.equal(at.status, 404, `${what}: ${id} version ${version}, forgotten: ${at.body}`);
      else assert.deepEqual(at, { status: 200, body: `{"order":${orderJson(state)}}` }, `${what}: ${id} version ${version}`);
    }
  }

  // The stream's snapshot: the kept orders that can trade, each once.
  const snapshot = await streamSnapshot(server.url);
  const ids = [...snapshot.matchAll(/"id":"([0-9a-f]{64})"/g)].map((m) => m[1]!).sort();
  const live = orderRows(kept, { statuses: [enumNumber(ORDER_STATUS, 'STATUS_ACTIVE'), enumNumber(ORDER_STATUS, 'STATUS_PARKED')] })
    .map((r) => r.key.id).sort();
  assert.deepEqual(ids, live, `${what}: the stream's snapshot`);
}

/** Ingests `file` into a fresh store of `backend` with `--retention window`, serves it, and holds it to the model. */
async function ingestAndCompare(backend: Backend, file: string, window: string, windowNs: bigint, name: string) {
  const store = await backend.fresh(dir, name);
  stores.push(store);
  const ingested = runCli(['ingest', file, ...store.args, '--retention', window]);
  assert.equal(ingested.status, 0, ingested.stderr);
  const everything = replay(readModelBlocks(file));
  const kept = retain(everything, windowNs);
  const server = await startServe(['--no-ingest', '--workers', '1', ...store.args]);
  try {
    await assertServedAsKept(server, everything, kept, `${backend.name}, ${name}, --retention ${window}`);
  } finally {
    await server.stop();
  }
  return forgotten(everything, kept);
}

for (const backend of BACKENDS) {
  test(`${backend.name}: the real recording pruned to 5 minutes answers every endpoint as the rules keep`, async (t) => {
    const file = realRecording(t);
    if (file === undefined) return;
    const gone = await ingestAndCompare(backend, file, '5m', 5n * NS.m, 'real-5m');
    assert.ok(gone.orders.length > 0, `5m forgets orders of the recording: ${JSON.stringify(gone)}`);
  });

  test(`${backend.name}: a simulated network pruned to 8 seconds answers every endpoint as the rules keep`, async () => {
    const file = join(dir, `sim-${backend.name.replace(/\W+/g, '-')}.events`);
    const made = runCli(['simulate', '--out', file, '--blocks', '80', '--seed', '13', '--orders-per-block', '4']);
    assert.equal(made.status, 0, made.stderr);
    const gone = await ingestAndCompare(backend, file, '8s', 8n * NS.s, 'sim-8s');
    assert.ok(gone.orders.length > 0 && gone.versions.length > 0, `8s forgets orders and versions: ${JSON.stringify(gone).slice(0, 300)}`);
  });
}
