/**
 * The order stream from instances that do not write: every HTTP process of
 * `serve --workers 2` over the embedded store, and a `serve --no-ingest`
 * instance on each PostgreSQL server, stream the blocks another process
 * writes (the embedded store's file watched, PostgreSQL's notification
 * listened for); a subscriber resuming from block 0 gets every block's
 * changes, each as the model prints it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WebSocket } from 'ws';
import { streamOrderJson } from '../../src/api/stream/frames.js';
import type { Block } from '../../src/domain/block.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openWriter } from '../../src/store/open.js';
import { writeBlocks } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { eventually, startServe, type RunningServer } from '../support/cli.js';
import { readModelBlocks } from '../support/model-events.js';
import type { ModelBlock } from '../support/model-types.js';
import { createModelStore } from '../support/model.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-stream-instances-'));
const stores: FreshStore[] = [];
const servers: RunningServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

/** The orders of every updates frame a WebSocket gets, each as its JSON text. */
function updatesOver(url: string): Promise<{ orders: string[]; ws: WebSocket; ended: () => string }> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/api/v2/stream/orders?fromBlock=0`);
  const orders: string[] = [];
  let end = 'open';
  ws.on('message', (m) => {
    const frame = JSON.parse(String(m)) as { result?: { updates: { orders: unknown[] } }; error?: unknown };
    // An error frame (the stream failed) is kept for the failure's message; it has no orders.
    if (frame.result === undefined) end = `error frame ${JSON.stringify(frame.error)}`;
    else orders.push(...frame.result.updates.orders.map((o) => JSON.stringify(o)));
  });
  ws.on('close', (code, reason) => (end = `${end === 'open' ? '' : `${end}, `}closed ${code} ${String(reason)}`));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ orders, ws, ended: () => end }));
    ws.once('error', reject);
  });
}

/** The simulated chain: the blocks our decoder reads, to write; and the model's own reading of the same file. */
let blocks: { written: Block[]; model: ModelBlock[] } | undefined;
async function simulated(): Promise<{ written: Block[]; model: ModelBlock[] }> {
  if (blocks === undefined) {
    const file = join(dir, 'sim.events');
    await writeEventFile(file, { seed: 7, blocks: 30, ordersPerBlock: 10 });
    blocks = { written: await readBlocks(file), model: readModelBlocks(file) };
  }
  return blocks;
}

for (const backend of BACKENDS) {
  const embedded = backend.name === 'embedded';
  test(`${backend.name}: ${embedded ? 'every HTTP process of serve --workers 2' : 'serve --no-ingest'} streams the blocks another process writes`, async () => {
    const { written: all, model } = await simulated();
    const fresh = await backend.fresh(dir, `${backend.name}-instances`);
    stores.push(fresh);
    const writer = await openWriter(fresh.config);
    try {
      // The schema exists, and the first block: an instance that only reads may start.
      await writeBlocks(writer, all.slice(0, 1));
      const server = await startServe([...fresh.args, '--no-ingest', ...(embedded ? ['--workers', '2'] : [])]);
      servers.push(server);
      // Several connections: under --workers 2 they spread over both processes.
      const subscribers = await Promise.all([1, 2, 3, 4].map(() => updatesOver(server.url)));
      for (let i = 1; i < all.length; i += 5) await writeBlocks(writer, all.slice(i, i + 5));
      const last = all.at(-1)!.height;
      const expected = (await createModelStore(model).orderChanges(0n, last, 1_000_000))
        .flatMap((b) => b.changes.map((c) => JSON.stringify(JSON.parse(streamOrderJson(c.node)))));
      assert.ok(expected.length > 100);
      await eventually('every subscriber to get every change', async () => subscribers.every((s) => s.orders.length >= expected.length), 60_000)
        .catch((e: unknown) => {
          const got = subscribers.map((s) => `${s.orders.length} (${s.ended()})`).join(', ');
          throw new Error(`${String(e)}: of ${expected.length} changes they got ${got}`);
        });
      for (const s of subscribers) {
        assert.deepEqual(s.orders, expected);
        s.ws.terminate();
      }
    } finally {
      await writer.close();
    }
  });
}
