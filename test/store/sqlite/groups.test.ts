/**
 * Blocks written in groups (one transaction, current state written once per
 * group) must leave exactly the store that writing them one by one leaves.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { Block } from '../../../src/domain/block.js';
import { BlockAssembler } from '../../../src/ingest/assembler.js';
import { simulateEvents } from '../../../src/simulate/simulate.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { tempDatabase, tempStore } from '../helpers.js';

/** Simulated blocks as a store is handed them: each height once (the simulator repeats the first, as the network did). */
function simulatedBlocks(seed: number, blocks: number): Block[] {
  const assembler = new BlockAssembler();
  const out: Block[] = [];
  for (const event of simulateEvents({ seed, blocks, ordersPerBlock: 15, repeatFirstHeight: false })) {
    const block = assembler.push(event);
    if (block) out.push(block);
  }
  return out;
}

const TABLES = {
  orders_current: 'id_bytes',
  orders_history: 'height, seq',
  order_counts: 'dimension, value',
  signer_added: 'signature_id',
  signer_removed: 'signature_id',
  node_signatures: 'resource_id, sig',
  last_block: 'only_row',
  blocks: 'height',
};

function dump(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    db.defaultSafeIntegers(true);
    return Object.fromEntries(Object.entries(TABLES).map(([table, key]) => [
      table,
      // Counts of zero are the same as no row to the planner.
      db.prepare(`SELECT * FROM ${table}${table === 'order_counts' ? ' WHERE n <> 0' : ''} ORDER BY ${key}`).raw(true).all(),
    ]));
  } finally {
    db.close();
  }
}

test('any grouping of blocks into transactions stores exactly what one block at a time stores', async (t) => {
  const blocks = simulatedBlocks(11, 120);
  assert.ok(blocks.some((b) => b.signersAdded.length > 0) && blocks.some((b) => b.nodeSignatures.length > 0));
  const written = async (groupSizes: (i: number) => number) => {
    const { writer, path } = await tempStore(t);
    for (let i = 0, g = 0; i < blocks.length; g++) {
      const n = groupSizes(g);
      await writeBlocks(writer, blocks.slice(i, i + n));
      i += n;
    }
    await writer.close();
    return dump(path);
  };
  const oneByOne = await written(() => 1);
  assert.ok(oneByOne.orders_history!.length > oneByOne.orders_current!.length, 'orders change across blocks');
  assert.deepEqual(await written(() => blocks.length), oneByOne, 'all blocks in one transaction');
  assert.deepEqual(await written((g) => [7, 1, 30, 2, 13][g % 5]!), oneByOne, 'uneven groups');
});

test('the writer thread, with writes outstanding side by side, stores exactly what one write of every block does', async (t) => {
  const blocks = simulatedBlocks(12, 90);
  const direct = await tempStore(t);
  await writeBlocks(direct.writer, blocks);
  const directLast = await direct.writer.lastBlock();
  await direct.writer.close();

  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  // Groups of 7 blocks, every write issued before any has finished.
  const writes: Promise<void>[] = [];
  for (let i = 0; i < blocks.length; i += 7) writes.push(writeBlocks(writer, blocks.slice(i, i + 7)));
  await Promise.all(writes);
  assert.deepEqual(await writer.lastBlock(), directLast);
  await writer.close();
  assert.deepEqual(dump(path), dump(direct.path));
});
