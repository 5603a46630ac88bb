/**
 * The order node written in JavaScript (src/store/order-node.ts) is the text
 * the database writes for the same state (src/store/node-json.ts): for every
 * order of a simulated network and of the real recording, the node of its
 * last event equals its node in the list, on every backend.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import type { Order } from '../../src/domain/order.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import { orderNodeJson } from '../../src/store/order-node.js';
import { writeBlocks } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { realRecording } from '../support/real-recording.js';
import { block, hex, order } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-order-node-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

/** The last state of each order in these blocks, by lower-case id. */
function lastStates(blocks: readonly Block[]): Map<string, Order> {
  const last = new Map<string, Order>();
  for (const b of blocks) for (const o of b.orders) last.set(o.id.toLowerCase(), o);
  return last;
}

// No U+0000: PostgreSQL's text cannot hold it (the README's Storage section).
const nasty = 'q"b\\s/ \n\t\r\u0001\u001f\u007f é ✓ 😀 \u2028 </script>';
const edgeCases: Block[] = [block(1, {
  orders: [
    order(1, { reference: nasty, price: nasty, liquidityProvisionId: hex(0xcafe).toUpperCase(), id: hex(1).toUpperCase() }),
    order(2, { reason: 0, peggedOrder: { reference: 0, offset: '5' } }),
    order(3, { reason: 14, peggedOrder: { reference: 2, offset: nasty }, icebergOrder: { peakSize: 3n, minimumVisibleSize: 1n, reservedRemaining: 1n << 63n } }),
    order(4, { side: 9, status: 42, type: 7, timeInForce: 99, reason: 38, createdAt: 1678444076736102285n, expiresAt: -1500n, updatedAt: 999n, size: (1n << 64n) - 1n }),
  ],
})];

async function nodesOf(fresh: FreshStore, blocks: readonly Block[]): Promise<Map<string, string>> {
  const writer = await openWriter(fresh.config);
  try {
    await writeBlocks(writer, blocks);
  } finally {
    await writer.close();
  }
  const store = await openStore(fresh.config, { readOnly: true });
  try {
    const page = await store.listOrders({}, { newestFirst: true, mode: 'first', limit: 5000 });
    return new Map(page.rows.map((r) => [r.key.id, r.json]));
  } finally {
    await store.close();
  }
}

for (const backend of BACKENDS) {
  test(`${backend.name}: the node of an order's last state, written in JavaScript, is the list's node to the byte`, async (t) => {
    const file = join(dir, 'sim.events');
    await writeEventFile(file, { seed: 31, blocks: 60, ordersPerBlock: 20 });
    const inputs: [string, Block[]][] = [['simulated', await readBlocks(file)], ['edge cases', edgeCases]];
    const real = realRecording(t);
    if (real !== undefined) inputs.push(['the real recording', await readBlocks(real)]);
    for (const [name, blocks] of inputs) {
      const fresh = await backend.fresh(dir, `${backend.name}-${stores.length}`);
      stores.push(fresh);
      const listed = await nodesOf(fresh, blocks);
      const states = lastStates(blocks);
      assert.equal(listed.size, states.size, `${name}: every order listed`);
      for (const [id, state] of states) assert.equal(orderNodeJson(state), listed.get(id), `${name}: order ${id}`);
    }
  });
}
