/**
 * What the migration that adds each block's digest must leave, on either
 * backend: blocks stored before it have none and are compared by their hash
 * only; blocks stored after it are compared by their content.
 */
import assert from 'node:assert/strict';
import type { Block } from '../../src/domain/block.js';
import { blockDigest } from '../../src/domain/block-digest.js';
import { StoredBlockMismatchError } from '../../src/errors.js';
import { BlockAssembler } from '../../src/ingest/assembler.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { ingest } from '../../src/ingest/ingester.js';
import type { EventSource } from '../../src/ingest/source.js';
import type { BlockGroup, WriteStore } from '../../src/store/store.js';
import { CHAIN, blockEvents, order } from './events.js';

/** Blocks `heights`, each with one order at `price`; block h's hash is "hash-h" whatever the price. */
export function pricedBlocks(heights: number[], price: string): BusEvent[] {
  return heights.flatMap((h) => blockEvents(BigInt(h), [{ kind: 'order', order: order(h, { price }) }], CHAIN, `hash-${h}`));
}

export function eventsSource(events: BusEvent[]): EventSource {
  return {
    name: 'test://events', unit: 'message',
    async *events() {
      yield { events: events.map((event, offset) => ({ event, offset })) };
    },
  };
}

/** `writer` holds blocks 1 and 2, stored before the migration (pricedBlocks at price '100'); checks what it does now. */
export async function checkBlocksStoredBeforeDigests<B extends BlockGroup>(writer: WriteStore<B>): Promise<void> {
  assert.deepEqual(
    await writer.storedBlocks(1n, 2n),
    new Map([[1n, { hash: 'hash-1', digest: '' }], [2n, { hash: 'hash-2', digest: '' }]]),
    'blocks stored before the migration keep their hash and have no digest',
  );
  // Other content at their heights cannot be told: nothing to compare it with.
  const stats = await ingest(eventsSource(pricedBlocks([1, 2, 3], '9')), writer);
  assert.equal(stats.blocksAlreadyStored, 2);
  assert.equal(stats.blocksWithOtherContent, 0);
  assert.equal(stats.blocksCommitted, 1);
  const assembler = new BlockAssembler();
  const [block3] = pricedBlocks([3], '9').map((e) => assembler.push(e)).filter((b): b is Block => b !== undefined);
  assert.deepEqual((await writer.storedBlocks(3n, 3n)).get(3n), { hash: 'hash-3', digest: blockDigest(block3!) }, 'a block stored now keeps its digest');
  await assert.rejects(ingest(eventsSource(pricedBlocks([1, 2, 3, 4], '100')), writer), (e: unknown) =>
    e instanceof StoredBlockMismatchError && /^block 3 is stored with other content/.test(e.message));
  assert.equal((await writer.lastBlock())?.height, 3n, 'block 4 was not written');
}
