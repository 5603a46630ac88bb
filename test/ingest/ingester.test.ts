import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IngestError } from '../../src/ingest/errors.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { ingest } from '../../src/ingest/ingester.js';
import type { EventSource } from '../../src/ingest/source.js';
import { CHAIN, blockEvents, blockTime, order } from '../support/events.js';
import { RecordingStore } from '../support/recording-store.js';

function source(events: BusEvent[]): EventSource {
  return {
    name: 'test://events', unit: 'message',
    async *events() {
      yield { events: events.map((event, offset) => ({ event, offset })) };
    },
  };
}

const blocks = (...heights: bigint[]) =>
  heights.flatMap((h) => blockEvents(h, [{ kind: 'order', order: order(Number(h)) }]));

test('blocks at or below the last committed height are skipped, the rest stored once', async () => {
  const store = new RecordingStore({ height: 2n, time: blockTime(2n), chainId: CHAIN });
  const stats = await ingest(source(blocks(1n, 2n, 3n, 4n)), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [3n, 4n]);
  assert.equal(stats.blocksAlreadyStored, 2);
  assert.equal(stats.lastBlock?.height, 4n);
});

test('a gap in heights stops ingestion unless gaps are allowed', async () => {
  const store = new RecordingStore();
  await assert.rejects(ingest(source(blocks(1n, 2n, 5n)), store), /blocks 3\.\.4 are missing/);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n]);
  const lenient = new RecordingStore();
  await ingest(source(blocks(1n, 2n, 5n)), lenient, { allowGaps: true });
  assert.deepEqual(lenient.blocks.map((b) => b.height), [1n, 2n, 5n]);
});

test('events of another chain are refused', async () => {
  const store = new RecordingStore({ height: 1n, time: blockTime(1n), chainId: 'other-chain' });
  await assert.rejects(ingest(source(blocks(2n)), store), /chain "test-chain", the store holds chain "other-chain"/);
  assert.equal(store.blocks.length, 0);
});

test('events before the first BeginBlock are counted and left out; a mid-stream block break is an error', async () => {
  const tail = blockEvents(1n, [{ kind: 'order', order: order(1) }]).slice(1); // no BeginBlock
  const store = new RecordingStore();
  const stats = await ingest(source([...tail, ...blocks(2n)]), store);
  assert.equal(stats.eventsOutsideBlock, tail.length);
  assert.deepEqual(store.blocks.map((b) => b.height), [2n]);

  const unclosed = blockEvents(3n, []).slice(0, 1);
  await assert.rejects(ingest(source([...unclosed, ...blocks(4n)]), new RecordingStore()), (e: unknown) =>
    e instanceof IngestError && /BeginBlock 4 while block 3 has no EndBlock/.test(e.message) && e.blockHeight === 3n,
  );
});

test('an event claiming another block inside a block is refused, by its block field or its id', async () => {
  const events = blocks(1n);
  events[1] = { ...events[1]!, block: '9' };
  await assert.rejects(ingest(source(events), new RecordingStore()), /says block "9" inside block 1/);
  const byId = blocks(12n);
  byId[1] = { ...byId[1]!, id: '13-1' };
  await assert.rejects(ingest(source(byId), new RecordingStore()), /event id "13-1" does not belong to block 12/);
  const prefix = blocks(12n);
  prefix[1] = { ...prefix[1]!, id: '1-1' }; // "1-" is not "12-"
  await assert.rejects(ingest(source(prefix), new RecordingStore()), /does not belong to block 12/);
});

test('a restart drops the open block; the resent block is stored once', async () => {
  const [b1, b2] = [blockEvents(1n, [{ kind: 'order', order: order(1) }]), blockEvents(2n, [{ kind: 'order', order: order(2) }])];
  const src: EventSource = {
    name: 'test://peer', unit: 'message',
    async *events() {
      yield { events: [...b1, ...b2.slice(0, 2)].map((event, offset) => ({ event, offset })) };
      yield { restart: true, events: [...b1, ...b2].map((event, offset) => ({ event, offset })) };
    },
  };
  const store = new RecordingStore();
  const stats = await ingest(src, store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n]);
  assert.equal(stats.blocksAlreadyStored, 1);
});
