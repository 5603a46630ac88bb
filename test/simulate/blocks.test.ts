import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busEventTypeOf } from '../../src/ingest/codec.js';
import { BusEventType } from '../../src/ingest/event-types.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { DEFAULT_BLOCK_INTERVAL_NS, DEFAULT_CHAIN_ID, DEFAULT_START_TIME, simulateEvents } from '../../src/simulate/simulate.js';
import { blocksOf, chain, FIXTURE, UPPER_HEX64 } from './fixture.js';

/** Events the core emits at the block boundary, outside any transaction. */
const BLOCK_LEVEL: readonly BusEvent['kind'][] = ['beginBlock', 'timeUpdate', 'endBlock', 'other'];

test('the stream starts with height 1 twice: an empty first copy, then the network\'s first block under another hash', async () => {
  const blocks = blocksOf((await chain()).events);
  const [first, second] = blocks;
  assert.ok(first !== undefined && second !== undefined);
  const begin1 = first[0]!;
  const begin2 = second[0]!;
  assert.ok(begin1.kind === 'beginBlock' && begin2.kind === 'beginBlock');
  assert.equal(begin1.height, 1n);
  assert.equal(begin2.height, 1n);
  assert.notEqual(begin1.hash, begin2.hash, 'two hashes');
  assert.equal(begin1.timestamp, begin2.timestamp, 'the same time, as in the real recording');
  assert.deepEqual(first.map((e) => e.kind), ['beginBlock', 'timeUpdate', 'other', 'endBlock'], 'no orders, no bundles');
  assert.deepEqual(first.map((e) => e.id), ['1-1', '1-2', '1-3', '1-4']);
  assert.ok(second.some((e) => e.kind === 'order'), 'the second copy is a real block, which a data node skips');
  const third = blocks[2]![0]!;
  assert.ok(third.kind === 'beginBlock' && third.height === 2n, 'then height 2');
});

test('without the restart, the stream is exactly the rest of the default one', () => {
  const opts = { seed: 3, blocks: 6, ordersPerBlock: 10 };
  const plain = [...simulateEvents({ ...opts, repeatFirstHeight: false })];
  const restarted = [...simulateEvents(opts)];
  assert.equal(plain.filter((e) => e.kind === 'beginBlock').length, 6);
  assert.deepStrictEqual(restarted.slice(4), plain, 'the restart block draws nothing the rest depends on');
  const first = restarted[0]!;
  assert.ok(first.kind === 'beginBlock' && first.height === 1n);
});

test('each block: BeginBlock, TimeUpdate, its events, EndBlock; heights consecutive from 1 after the restart', async () => {
  const blocks = blocksOf((await chain()).events).slice(1);
  assert.equal(blocks.length, FIXTURE.blocks);
  blocks.forEach((block, i) => {
    const height = BigInt(i + 1);
    const [begin, update] = block;
    const end = block[block.length - 1];
    assert.ok(begin?.kind === 'beginBlock' && begin.height === height, `block ${height} begins`);
    assert.ok(update?.kind === 'timeUpdate' && update.timestamp === begin.timestamp, `block ${height} time update`);
    assert.ok(end?.kind === 'endBlock' && end.height === height, `block ${height} ends`);
    const inside = block.slice(1, -1);
    assert.ok(inside.every((e) => e.kind !== 'beginBlock' && e.kind !== 'endBlock'));
  });
});

test('events name their block by its hash in upper case; ids are "<height>-<seq>" from 1', async () => {
  const blocks = blocksOf((await chain()).events);
  for (const block of blocks) {
    const begin = block[0]!;
    assert.ok(begin.kind === 'beginBlock');
    assert.match(begin.hash, /^[0-9a-f]{64}$/, 'BeginBlock carries the hash in lower case');
    assert.equal(begin.block, begin.hash.toUpperCase(), 'events carry it in upper case');
    assert.match(begin.block, UPPER_HEX64);
    block.forEach((e, i) => {
      assert.equal(e.id, `${begin.height}-${i + 1}`);
      assert.equal(e.block, begin.block, `${e.id} names its block`);
      assert.equal(e.chainId, DEFAULT_CHAIN_ID);
    });
  }
  // Not the height, in any event.
  assert.ok(blocks.every((b) => !/^\d+$/.test(b[0]!.block)));
});

test('block times carry nanosecond digits, grow from block to block and stay near their nominal time', async () => {
  const begins = (await chain()).events.flatMap((e) => (e.kind === 'beginBlock' ? [e.timestamp] : [])).slice(1);
  begins.forEach((t, i) => {
    const nominal = DEFAULT_START_TIME + BigInt(i) * DEFAULT_BLOCK_INTERVAL_NS;
    assert.ok(t >= nominal && t < nominal + DEFAULT_BLOCK_INTERVAL_NS / 4n, `block ${i + 1} at ${t}`);
    if (i > 0) assert.ok(t > begins[i - 1]!);
  });
  const wholeMicros = begins.filter((t) => t % 1000n === 0n).length;
  assert.ok(wholeMicros <= 2, `${wholeMicros} of ${begins.length} block times on a whole microsecond`);
  assert.ok(new Set(begins.map((t) => t % 1_000_000_000n)).size > begins.length * 0.9, 'not one fixed fraction of a second');
});

test('every event carries an upper-case transaction hash; block-level events carry the block\'s', async () => {
  const { records } = await chain();
  const generated = [...simulateEvents(FIXTURE)];
  assert.equal(generated.length, records.length);
  generated.forEach((e, i) => {
    assert.match(e.txHash ?? '', UPPER_HEX64, `${e.id}`);
    assert.equal(records[i]!.txHash, e.txHash, `${e.id}: tx_hash is in the file`);
    if (BLOCK_LEVEL.includes(e.kind)) assert.equal(e.txHash, e.block, `${e.id} (${e.kind}) is the block's own`);
  });
  const orderTx = generated.filter((e) => e.kind === 'order' && e.txHash !== e.block);
  assert.ok(orderTx.length > generated.filter((e) => e.kind === 'order').length * 0.9, 'orders come in transactions');
});

test('the events of one transaction come together, and transactions of a block differ', async () => {
  const blocks = blocksOf([...simulateEvents(FIXTURE)]);
  let multiEvent = 0;
  for (const block of blocks) {
    const seen = new Set<string>();
    let previous = '';
    for (const e of block) {
      const tx = e.txHash ?? '';
      // The block's own events come anywhere, but never inside a transaction.
      if (tx === e.block) {
        previous = tx;
        continue;
      }
      if (tx !== previous) {
        assert.ok(!seen.has(tx), `${e.id}: transaction ${tx} is split`);
        seen.add(tx);
      } else multiEvent++;
      previous = tx;
    }
  }
  assert.ok(multiEvent > 100, `${multiEvent} events following another of their transaction`);
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

test('block hashes differ from block to block, the two copies of height 1 included', async () => {
  const { events } = await chain();
  const hashes = new Set(events.flatMap((e) => (e.kind === 'beginBlock' ? [e.hash] : [])));
  assert.equal(hashes.size, FIXTURE.blocks + 1);
});
