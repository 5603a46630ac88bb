/**
 * The reads beside the listings on every backend against the model
 * (test/support/model.ts, written from docs/compatibility.md, section 12): one order now
 * and at each version, the pages of its versions walked both ways in both
 * orders, and the signer-removed bundles with each filter; on a simulated
 * network with amendments and validators removed, and on hand-made blocks
 * where one block holds two versions of an order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import type { BundleFilter, BundleKey } from '../../src/domain/bundle.js';
import type { OrderVersionKey } from '../../src/domain/order.js';
import type { Page, PageRequest } from '../../src/domain/page.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import { writeBlocks, type QueryStore } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { readModelBlocks } from '../support/model-events.js';
import { createModelStore, orderVersions, replay } from '../support/model.js';
import { block, hex, order } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-companions-store-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

/** Every row of a listing, page by page, forward or backward, as (json, key) text. */
async function walk<K>(list: (page: PageRequest<K>) => Promise<Page<K>>, newestFirst: boolean, size: number, backward: boolean): Promise<string[]> {
  const out: string[][] = [];
  let cursor: K | undefined;
  for (;;) {
    const request: PageRequest<K> = { newestFirst, mode: backward ? 'last' : 'first', limit: size };
    if (cursor !== undefined) request.cursor = cursor;
    const page = await list(request);
    out.push(page.rows.map((r) => `${r.json} ${JSON.stringify(r.key, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`));
    const more = backward ? page.hasPreviousPage : page.hasNextPage;
    if (!more || page.rows.length === 0) break;
    cursor = (backward ? page.rows[0] : page.rows.at(-1))!.key;
  }
  if (backward) out.reverse();
  return out.flat();
}

async function compareWalks<K>(what: string, store: (p: PageRequest<K>) => Promise<Page<K>>, model: (p: PageRequest<K>) => Promise<Page<K>>): Promise<void> {
  for (const newestFirst of [true, false]) {
    for (const backward of [false, true]) {
      for (const size of [1, 2, 1000]) {
        assert.deepEqual(
          await walk(store, newestFirst, size, backward), await walk(model, newestFirst, size, backward),
          `${what}: newestFirst=${newestFirst} ${backward ? 'last/before' : 'first/after'} ${size}`,
        );
      }
    }
  }
}

async function storeOf(backend: (typeof BACKENDS)[number], blocks: readonly Block[]): Promise<QueryStore> {
  const fresh = await backend.fresh(dir, `${backend.name}-${stores.length}`);
  stores.push(fresh);
  const writer = await openWriter(fresh.config);
  try {
    await writeBlocks(writer, blocks);
  } finally {
    await writer.close();
  }
  return openStore(fresh.config, { readOnly: true });
}

/** Two versions of order 1 in one block, the first updated again after the second; order 2 amended over two blocks. */
const handMade: Block[] = [
  block(1, { orders: [order(1, { version: 1n, remaining: 10n }), order(2, { version: 1n }), order(1, { version: 2n, remaining: 9n }), order(1, { version: 1n, remaining: 8n })] }),
  block(2, { orders: [order(2, { version: 2n, price: '7' })] }),
  block(3, { orders: [order(2, { version: 2n, price: '6' }), order(3)] }),
];

for (const backend of BACKENDS) {
  test(`${backend.name}: one order, its versions and the removed bundles are the model's`, async () => {
    const file = join(dir, 'sim.events');
    await writeEventFile(file, { seed: 31, blocks: 60, ordersPerBlock: 20 });
    // The store is given the blocks our decoder reads; the model reads the file itself.
    for (const [name, blocks, modelBlocks] of [['hand-made', handMade, handMade], ['simulated', await readBlocks(file), readModelBlocks(file)]] as const) {
      const store = await storeOf(backend, blocks);
      const model = createModelStore(modelBlocks);
      const state = replay(modelBlocks);
      try {
        let amended = 0;
        let walked = 0;
        for (const [id, versions] of orderVersions(state)) {
          assert.deepEqual(await store.getOrder(id), await model.getOrder(id), `${name}: order ${id}`);
          for (const version of [...versions.keys(), 0n, 99n]) {
            assert.deepEqual(await store.getOrder(id, version), await model.getOrder(id, version), `${name}: order ${id} version ${version}`);
          }
          if (versions.size > 1) amended++;
          // Walking every order's versions 12 ways is slow on a big network: 20 amended ones, and a few others.
          if ((versions.size > 1 && amended <= 20) || walked++ < 3) {
            await compareWalks<OrderVersionKey>(`${name}: versions of ${id}`, (p) => store.listOrderVersions(id, p), (p) => model.listOrderVersions(id, p));
          }
        }
        assert.ok(amended > 0, `${name}: some order has several versions`);
        const unknown = hex(0xdead);
        assert.deepEqual(await store.getOrder(unknown), await model.getOrder(unknown));
        assert.deepEqual((await store.listOrderVersions(unknown, { newestFirst: true, mode: 'first', limit: 10 })).rows, []);

        const removed = [...state.removed.values()];
        if (name === 'simulated') assert.ok(removed.length > 1, 'the simulated network removes signers');
        const filters: BundleFilter[] = [{}];
        const first = removed[0];
        if (first !== undefined) {
          filters.push({ nodeId: first.event.validatorId.toLowerCase() }, { submitter: first.submitter.toLowerCase() }, { epochSeq: first.event.epochSeq });
        }
        for (const filter of filters) {
          await compareWalks<BundleKey>(`${name}: removed bundles ${JSON.stringify(filter, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`,
            (p) => store.listRemovedBundles(filter, p), (p) => model.listRemovedBundles(filter, p));
        }
      } finally {
        await store.close();
      }
    }
  });
}
