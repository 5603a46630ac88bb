import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busEventTypeOf } from '../../src/ingest/codec.js';
import { BusEventType } from '../../src/ingest/event-types.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { DEFAULT_BLOCK_INTERVAL_NS, DEFAULT_CHAIN_ID, DEFAULT_START_TIME } from '../../src/simulate/simulate.js';
import { chain, FIXTURE, HEX64 } from './fixture.js';

function blocksOf(events: readonly BusEvent[]): BusEvent[][] {
  const blocks: BusEvent[][] = [];
  for (const e of events) {
    if (e.kind === 'beginBlock') blocks.push([]);
    const current = blocks[blocks.length - 1];
    assert.ok(current !== undefined, `event ${e.id} comes before any BeginBlock`);
    current.push(e);
  }
  return blocks;
}

test('each block: BeginBlock, TimeUpdate, its events, EndBlock; heights consecutive from 1', async () => {
  const { events } = await chain();
  const blocks = blocksOf(events);
  assert.equal(blocks.length, FIXTURE.blocks);
  blocks.forEach((block, i) => {
    const height = BigInt(i + 1);
    const time = DEFAULT_START_TIME + BigInt(i) * DEFAULT_BLOCK_INTERVAL_NS;
    const [begin, update] = block;
    const end = block[block.length - 1];
    assert.ok(begin?.kind === 'beginBlock' && begin.height === height && begin.timestamp === time, `block ${height} begins`);
    assert.match(begin.hash, HEX64);
    assert.ok(update?.kind === 'timeUpdate' && update.timestamp === time, `block ${height} time update`);
    assert.ok(end?.kind === 'endBlock' && end.height === height, `block ${height} ends`);
    const inside = block.slice(1, -1);
    assert.ok(inside.every((e) => e.kind !== 'beginBlock' && e.kind !== 'endBlock'));
    block.forEach((e, seq) => {
      assert.equal(e.id, `${height}-${seq}`);
      assert.equal(e.block, String(height));
      assert.equal(e.chainId, DEFAULT_CHAIN_ID);
    });
  });
});

test('every event carries the BusEventType of its body; other types are sprinkled in', async () => {
  const { events } = await chain();
  const otherTypes = new Set<number>();
  for (const e of events) {
    if (e.kind === 'other') {
      otherTypes.add(e.type);
      assert.ok(!(Object.values(BusEventType) as number[]).includes(e.type), `type ${e.type} must be one a data node skips`);
    } else {
      assert.equal(e.type, busEventTypeOf(e.kind), e.id);
    }
  }
  assert.ok(otherTypes.size >= 3, `skipped types seen: ${[...otherTypes].join(',')}`);
  assert.ok(otherTypes.has(11) && otherTypes.has(29));
});

test('block hashes differ from block to block', async () => {
  const { events } = await chain();
  const hashes = new Set(events.flatMap((e) => (e.kind === 'beginBlock' ? [e.hash] : [])));
  assert.equal(hashes.size, FIXTURE.blocks);
});
