/**
 * The endpoints beside the list on the real recording, on every backend,
 * through a real server: the recording's blocks are written one by one while
 * stream subscribers listen (WebSocket and chunked HTTP, with and without a
 * filter); each gets every block's changes once, in order, each state as the
 * list shows it at that block; then every order by id is its node in the
 * list, its versions are what the events say, and a late subscriber's
 * snapshot is the list's live orders. Expected frames are worked out here
 * from the events and the list, framed by hand.
 */
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import { buildApp } from '../../src/api/app.js';
import { streamOrderJson } from '../../src/api/stream/frames.js';
import type { Block } from '../../src/domain/block.js';
import { isLive, type Order } from '../../src/domain/order.js';
import { openStore, openWriter } from '../../src/store/open.js';
import { orderNodeJson } from '../../src/store/order-node.js';
import { encodeOrder } from '../../src/wire/order-message.js';
import { writeBlocks, type QueryStore } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { eventually } from '../support/cli.js';
import { REAL, realRecording } from '../support/real-recording.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-companions-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

/** Frames of at most 50 orders, as the original batches them. */
function framed(kind: 'updates', nodes: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < nodes.length; i += 50) out.push(`{"result":{"${kind}":{"orders":[${nodes.slice(i, i + 50).join(',')}]}}}`);
  return out;
}

/** Each (order, version) of a block once, at its last update, in the order of those last updates. */
function blockChanges(b: Block): { order: Order; lastOfOrder: boolean }[] {
  const last = new Map<string, number>();
  b.orders.forEach((o, i) => {
    const key = `${o.id.toLowerCase()}/${o.version}`;
    last.delete(key);
    last.set(key, i);
  });
  const lastOfOrder = new Map<string, number>();
  b.orders.forEach((o, i) => lastOfOrder.set(o.id.toLowerCase(), i));
  return [...last.values()].map((i) => ({ order: b.orders[i]!, lastOfOrder: lastOfOrder.get(b.orders[i]!.id.toLowerCase()) === i }));
}

async function listNodes(store: QueryStore, liveOnly = false): Promise<Map<string, string>> {
  const page = await store.listOrders(liveOnly ? { liveOnly } : {}, { newestFirst: true, mode: 'first', limit: 5000 });
  return new Map(page.rows.map((r) => [r.key.id, r.json]));
}

/** A subscriber's frames as they come. */
interface Listener { frames: string[]; close(): void }

function overWebSocket(base: string, query: string): Promise<Listener> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v2/stream/orders${query}`);
  const frames: string[] = [];
  ws.on('message', (m) => frames.push(String(m)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ frames, close: () => ws.terminate() }));
    ws.once('error', reject);
  });
}

function overHttp(base: string, query: string): Promise<Listener> {
  const frames: string[] = [];
  return new Promise((resolve, reject) => {
    const req = get(`${base}/api/v2/stream/orders${query}`, (res) => {
      assert.equal(res.statusCode, 200);
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf('\n')) >= 0) {
          frames.push(pending.slice(0, end));
          pending = pending.slice(end + 1);
        }
      });
      resolve({ frames, close: () => req.destroy() });
    });
    req.once('error', reject);
  });
}

async function getJson(base: string, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.text() };
}

for (const backend of BACKENDS) {
  test(`${backend.name}: the real recording's orders by id, their versions, and its live stream over both transports`, async (t) => {
    const real = realRecording(t);
    if (real === undefined) return;
    const blocks = await readBlocks(real);
    const fresh = await backend.fresh(dir, `${backend.name}-real`);
    stores.push(fresh);
    const writer = await openWriter(fresh.config);
    const store = await openStore(fresh.config, { readOnly: true });
    let app: FastifyInstance | undefined;
    const listeners: Listener[] = [];
    try {
      app = await buildApp({ store });
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const empty = '{"result":{"snapshot":{"lastPage":true}}}';
      const market = `?marketIds=${REAL.market}`;
      const subscribers = {
        wsAll: await overWebSocket(base, ''), httpAll: await overHttp(base, ''), wsMarket: await overWebSocket(base, market),
      };
      listeners.push(...Object.values(subscribers));
      await eventually('every snapshot', async () => Object.values(subscribers).every((s) => s.frames.length === 1), 30_000);
      for (const s of Object.values(subscribers)) assert.deepEqual(s.frames, [empty], 'an empty snapshot before any block');

      const expectedAll: string[] = [empty];
      const expectedMarket: string[] = [empty];
      // Blocks that change no order are written together: they owe no frame.
      let quiet: Block[] = [];
      for (const b of blocks) {
        if (b.orders.length === 0) {
          quiet.push(b);
          continue;
        }
        if (quiet.length > 0) await writeBlocks(writer, quiet);
        quiet = [];
        await writeBlocks(writer, [b]);
        const listed = await listNodes(store);
        const changes = blockChanges(b).map(({ order, lastOfOrder }) => ({
          market: order.marketId.toLowerCase(),
          // The order's state after this block is the list's; an earlier version of the same block, its event's.
          node: streamOrderJson(lastOfOrder ? listed.get(order.id.toLowerCase())! : orderNodeJson(order)),
        }));
        expectedAll.push(...framed('updates', changes.map((c) => c.node)));
        const inMarket = changes.filter((c) => c.market === REAL.market).map((c) => c.node);
        if (inMarket.length > 0) expectedMarket.push(...framed('updates', inMarket));
      }
      if (quiet.length > 0) await writeBlocks(writer, quiet);
      assert.ok(expectedAll.length > 10, 'the recording changes orders in many blocks');

      // A resume from before the first block catches up with the same frames, without a snapshot.
      const resumed = await overHttp(base, '?fromBlock=0');
      listeners.push(resumed);
      // Held to their frames at the end of the test, once a last block's frame says that nothing before it is still owed.
      const streams: [Listener, string[], string][] = [
        [subscribers.wsAll, [...expectedAll], 'WebSocket, no filter'], [subscribers.httpAll, [...expectedAll], 'chunked HTTP, no filter'],
        [subscribers.wsMarket, [...expectedMarket], 'WebSocket, one market'], [resumed, expectedAll.slice(1), 'resumed from block 0'],
      ];
      await eventually('every update', async () => streams.every(([l, expected]) => l.frames.length >= expected.length), 60_000);
      for (const [l, expected, what] of streams) assert.deepEqual(l.frames.slice(0, expected.length), expected, what);

      // A late subscriber's snapshot: the live orders, as the list has them, newest first.
      const late = await overWebSocket(base, '');
      listeners.push(late);
      const live = [...(await listNodes(store, true)).values()].map(streamOrderJson);
      await eventually('the late snapshot', async () => late.frames.length >= 1, 30_000);
      assert.deepEqual(late.frames, [`{"result":{"snapshot":{${live.length > 0 ? `"orders":[${live.join(',')}],` : ''}"lastPage":true}}}`]);

      // Every order by id is its node in the list; its versions are what the events say.
      const listed = await listNodes(store);
      assert.equal(listed.size, REAL.orders);
      const lastOfVersion = new Map<string, Map<bigint, Order>>();
      for (const b of blocks) {
        for (const o of b.orders) {
          const id = o.id.toLowerCase();
          const versions = lastOfVersion.get(id) ?? new Map<bigint, Order>();
          versions.set(o.version, o);
          lastOfVersion.set(id, versions);
        }
      }
      for (const [id, node] of listed) {
        assert.deepEqual(await getJson(base, `/api/v2/order/${id}`), { status: 200, body: `{"order":${node}}` }, id);
        assert.deepEqual(await getJson(base, `/api/v2/order/${id.toUpperCase()}`), { status: 200, body: `{"order":${node}}` }, 'upper case');
        const versions = [...lastOfVersion.get(id)!.entries()].sort(([a], [b]) => (a < b ? 1 : -1));
        for (const [version, state] of versions) {
          // The recording holds orders of version 0 (refused ones; versions count from 1): the original refuses
          // ?version=0 as it refuses any version <= 0, and so do we, though its versions list shows it
          // (docs/compatibility.md, section 12.1).
          if (version === 0n) {
            assert.equal((await getJson(base, `/api/v2/order/${id}?version=0`)).status, 400);
            continue;
          }
          assert.deepEqual(await getJson(base, `/api/v2/order/${id}?version=${version}`), { status: 200, body: `{"order":${orderNodeJson(state)}}` });
        }
        const page = JSON.parse((await getJson(base, `/api/v2/order/versions/${id}`)).body) as { orders: { edges: { node: unknown }[] } };
        assert.deepEqual(page.orders.edges.map((e) => e.node), versions.map(([, s]) => JSON.parse(orderNodeJson(s)) as unknown), `versions of ${id}`);
        const beyond = versions.length + 1;
        assert.equal((await getJson(base, `/api/v2/order/${id}?version=${beyond}`)).status, 404);
      }
      assert.ok([...lastOfVersion.values()].some((v) => v.size > 1), 'some order of the recording has several versions');
      assert.equal(live.length, [...listed.keys()].filter((id) => {
        const versions = lastOfVersion.get(id)!;
        return isLive([...versions.values()].at(-1)!);
      }).length);

      // One more block, with a new order of the market: every stream's frame for it comes after all it was owed
      // before, so a frame too many would show ahead of it.
      const like = blocks.flatMap((b) => b.orders).find((o) => o.marketId.toLowerCase() === REAL.market)!;
      const last = blocks.at(-1)!;
      const sentinel = { ...like, id: 'e'.repeat(64), version: 1n };
      await writeBlocks(writer, [{
        ...last, height: last.height + 1n, hash: '', orders: [sentinel], orderMessages: [encodeOrder(sentinel)],
        nodeSignatures: [], signersAdded: [], signersRemoved: [],
      }]);
      const frame = framed('updates', [streamOrderJson((await listNodes(store)).get(sentinel.id)!)]);
      for (const [, expected] of streams) expected.push(...frame);
      await eventually('the last block\'s frame', async () => streams.every(([l, expected]) => l.frames.length >= expected.length), 60_000);
      for (const [l, expected, what] of streams) assert.deepEqual(l.frames, expected, what);
    } finally {
      for (const l of listeners) l.close();
      await app?.close();
      await store.close();
      await writer.close();
    }
  });
}
