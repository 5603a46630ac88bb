import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CorruptInputError, IngestError, StoredBlockMismatchError } from '../../src/errors.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { incompleteBlockMessage, ingest } from '../../src/ingest/ingester.js';
import { heightRanges } from '../../src/ingest/stored-blocks.js';
import type { EventSource } from '../../src/ingest/source.js';
import { CHAIN, blockEvents, blockHash, blockTime, order } from '../support/events.js';
import { within } from '../support/fuzz.js';
import { BlockList, RecordingStore } from '../support/recording-store.js';

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
  const store = new RecordingStore({ height: 2n, time: blockTime(2n), chainId: CHAIN, hash: '' });
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
  const store = new RecordingStore({ height: 1n, time: blockTime(1n), chainId: 'other-chain', hash: '' });
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

test('after a block, only a BeginBlock may come: a block whose BeginBlock is damaged is an error, not silently left out', async () => {
  // Found while fuzzing the decoders: the last block's BeginBlock turned into another event type made the
  // whole block events "outside any block", counted and skipped, and ingestion ended as if it had not been sent.
  const damaged = (events: BusEvent[], i: number): BusEvent[] =>
    events.map((e, k) => (k === i ? { id: e.id, block: e.block, chainId: e.chainId, type: 3, kind: 'other' } : e));
  const events = blocks(1n, 2n, 3n);
  const lastBegin = events.map((e) => e.kind).lastIndexOf('beginBlock');
  const store = new RecordingStore();
  await assert.rejects(ingest(source(damaged(events, lastBegin)), store), (e: unknown) => {
    assert.ok(e instanceof IngestError, String(e));
    assert.match(e.message, /^test:\/\/events: message \d+, outside any block: event 3-1 \(type 3\) comes after block 2's EndBlock, where a BeginBlock must$/);
    assert.equal(e.position?.offset, lastBegin);
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n]);

  // A damaged EndBlock's successor stays an error too, of its own (not the gap it used to leave behind).
  const middle = blocks(1n, 2n, 3n, 4n);
  await assert.rejects(ingest(source(damaged(middle, middle.findIndex((e) => e.kind === 'beginBlock' && e.height === 3n))), new RecordingStore()),
    /event 3-1 \(type 3\) comes after block 2's EndBlock, where a BeginBlock must/);
});

test('a source that starts again (a core reconnecting) may start inside a block: its events before a BeginBlock are counted and left out', async () => {
  const [one, two] = [blocks(1n), blocks(2n)];
  const store = new RecordingStore();
  const stats = await ingest({
    name: 'test://restart', unit: 'message',
    async *events() {
      yield { events: [...one, ...two.slice(0, 2)].map((event, offset) => ({ event, offset })) };
      // The new peer resends from inside block 1: its EndBlock first, then block 2 whole.
      yield { restart: true, events: [one.at(-1)!, ...two].map((event, offset) => ({ event, offset: 100 + offset })) };
    },
  }, store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n]);
  assert.equal(stats.eventsOutsideBlock, 1);
});

test('an event claiming another block inside a block is refused, by its block field or its id', async () => {
  const events = blocks(1n);
  events[1] = { ...events[1]!, block: blockHash(9n).toUpperCase() };
  await assert.rejects(ingest(source(events), new RecordingStore()), new RegExp(`names block "${blockHash(9n).toUpperCase()}" inside block 1`));
  const byId = blocks(12n);
  byId[1] = { ...byId[1]!, id: '13-1' };
  await assert.rejects(ingest(source(byId), new RecordingStore()), /event id "13-1" does not belong to block 12/);
  const prefix = blocks(12n);
  prefix[1] = { ...prefix[1]!, id: '1-1' }; // "1-" is not "12-"
  await assert.rejects(ingest(source(prefix), new RecordingStore()), /does not belong to block 12/);
});

test('a height seen again is skipped; with another hash than the stored block it is a warning naming both', async () => {
  const withOrder = (h: bigint, n: number, variant = 0) => blockEvents(h, [{ kind: 'order', order: order(n) }], CHAIN, blockHash(h, variant));
  // As the real recording starts: height 1 twice, with two hashes. The first is kept.
  const warnings: string[] = [];
  const store = new RecordingStore();
  const stats = await ingest(source([...withOrder(1n, 1), ...withOrder(1n, 2, 1), ...withOrder(2n, 3)]), store, {
    onWarning: (m) => warnings.push(m),
  });
  assert.deepEqual(store.blocks.map((b) => [b.height, b.hash, b.orders[0]!.id]), [[1n, blockHash(1n), order(1).id], [2n, blockHash(2n), order(3).id]]);
  assert.equal(stats.blocksAlreadyStored, 1);
  assert.equal(stats.blocksWithOtherHash, 1);
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0]!.includes(blockHash(1n, 1)) && warnings[0]!.includes(blockHash(1n)), warnings[0]);

  // Run again over the same store: blocks below the last are compared with the stored ones.
  const again: string[] = [];
  const rerun = await ingest(source([...withOrder(1n, 1), ...withOrder(1n, 2, 1), ...withOrder(2n, 3), ...withOrder(2n, 3, 2), ...withOrder(3n, 4)]), store, {
    onWarning: (m) => again.push(m),
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);
  assert.equal(rerun.blocksAlreadyStored, 4);
  assert.equal(rerun.blocksWithOtherHash, 2, 'block 1 (older) and block 2 (the last) with other hashes');
  assert.equal(again.length, 2);
  assert.ok(again[1]!.includes(blockHash(2n, 2)) && again[1]!.includes(blockHash(2n)), again[1]);

  // Same hash, whatever its case, and the same events: a replay, no warning.
  const quiet: string[] = [];
  await ingest(source(blockEvents(2n, [{ kind: 'order', order: order(3) }], CHAIN, blockHash(2n).toUpperCase())), store, { onWarning: (m) => quiet.push(m) });
  assert.deepEqual(quiet, []);
});

test('a block seen again while its first copy still waits in the commit group is compared with it', async () => {
  const warnings: string[] = [];
  const store = new RecordingStore();
  const events = [...blocks(1n, 2n, 3n), ...blockEvents(2n, [], CHAIN, blockHash(2n, 5))];
  const stats = await ingest(source(events), store, { commit: { maxBlocks: 100 }, onWarning: (m) => warnings.push(m) });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);
  assert.equal(stats.blocksWithOtherHash, 1);
  assert.match(warnings[0]!, /block 2 came again/);
});

test('a source that ends inside a block stores every whole block and names the incomplete one', async () => {
  const cut = [...blocks(1n, 2n), ...blockEvents(3n, [{ kind: 'order', order: order(3) }]).slice(0, 2)];
  const store = new RecordingStore();
  const stats = await ingest(source(cut), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n]);
  // The offsets of this source are event positions: block 3 starts at the seventh event.
  assert.deepEqual(stats.incompleteBlock, { height: 3n, offset: 6 });
  assert.equal(stats.lastBlock?.height, 2n);
  assert.match(incompleteBlockMessage(stats, 'message')!, /ends inside block 3 \(from message offset 6\): that block is incomplete and was not stored/);

  // Cut off inside a record, after a whole block: the source says where; no height is known.
  const tail: EventSource = {
    name: 'test://cut', unit: 'byte',
    async *events() {
      yield { events: blocks(1n).map((event, offset) => ({ event, offset })), cutOff: { offset: 300, bytes: 17 } };
    },
  };
  const cutStats = await ingest(tail, new RecordingStore());
  assert.deepEqual(cutStats.incompleteBlock, { offset: 300 });
  assert.match(incompleteBlockMessage(cutStats, 'byte')!, /a block whose BeginBlock is cut off \(from byte offset 300\)/);

  const whole = await ingest(source(blocks(1n, 2n)), new RecordingStore());
  assert.equal(whole.incompleteBlock, undefined);
  assert.equal(incompleteBlockMessage(whole, 'byte'), undefined);
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

test('blocks a source has ready are committed together, up to the group limit', async () => {
  const heights = Array.from({ length: 25 }, (_, i) => BigInt(i + 1));
  const grouped = new RecordingStore();
  await ingest(source(blocks(...heights)), grouped, { commit: { maxBlocks: 10 } });
  assert.deepEqual(grouped.commits, [10, 10, 5]);
  assert.deepEqual(grouped.blocks.map((b) => b.height), heights);

  const single = new RecordingStore();
  await ingest(source(blocks(...heights)), single, { commit: { maxBlocks: 1 } });
  assert.deepEqual(single.commits, heights.map(() => 1));
});

/** A source that delivers the given event batches, then waits for `release` before ending. */
function stalling(batches: BusEvent[][]): { source: EventSource; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    release: () => release(),
    source: {
      name: 'test://stalling', unit: 'message',
      async *events() {
        for (const events of batches) yield { events: events.map((event, offset) => ({ event, offset })) };
        await released;
      },
    },
  };
}

test('blocks are committed as soon as the source is idle', async () => {
  const { source: src, release } = stalling([blocks(1n, 2n)]);
  const store = new RecordingStore();
  const done = ingest(src, store, { commit: { maxBlocks: 100, idleMs: 10, maxDelayMs: 60_000 } });
  // The source waits for ever: only its being idle can commit them. The deadline only stops a hang.
  await within(30_000, 'the commit of an idle source\'s blocks', store.written(2));
  assert.deepEqual(store.commits, [2], 'both blocks in one commit, made while the source still waits');
  release();
  await done;
  assert.deepEqual(store.commits, [2]);
});

test('a block is committed within the commit delay even while the source keeps delivering', async () => {
  // A block every 15 ms of the test's clock, never a pause: the 40 ms delay alone makes the commits.
  let now = 0;
  const src: EventSource = {
    name: 'test://busy', unit: 'message',
    async *events() {
      for (let h = 1n; h <= 6n; h++) {
        now += 15;
        yield { events: blocks(h).map((event, offset) => ({ event, offset })) };
      }
    },
  };
  const store = new RecordingStore();
  await ingest(src, store, { commit: { maxBlocks: 100, idleMs: 60_000, maxDelayMs: 40 }, now: () => now });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n, 4n, 5n, 6n]);
  // Block 1 came at 15 ms: due at 55, so block 4 (at 60) is added to a due group; blocks 5 and 6 wait for the end.
  assert.deepEqual(store.commits, [4, 2]);
});

test('stopping, at a fault or on request, first commits every complete block read', async () => {
  const broken: EventSource = {
    name: 'test://broken', unit: 'byte',
    async *events() {
      yield { events: blocks(1n, 2n, 3n).map((event, offset) => ({ event, offset })) };
      throw new CorruptInputError('record 99 is cut short', { offset: 1234 });
    },
  };
  const store = new RecordingStore();
  await assert.rejects(ingest(broken, store, { commit: { maxBlocks: 100, idleMs: 60_000, maxDelayMs: 60_000 } }), (e: unknown) =>
    e instanceof IngestError && /offset 1234/.test(e.message));
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);

  const gap = new RecordingStore();
  await assert.rejects(ingest(source(blocks(1n, 2n, 7n)), gap, { commit: { maxBlocks: 100, idleMs: 60_000, maxDelayMs: 60_000 } }), /missing/);
  assert.deepEqual(gap.blocks.map((b) => b.height), [1n, 2n]);

  const controller = new AbortController();
  let released = false;
  const stoppable: EventSource = {
    name: 'test://stoppable', unit: 'message',
    async *events() {
      try {
        yield { events: blocks(1n).map((event, offset) => ({ event, offset })) };
        controller.abort();
        yield { events: blocks(2n).map((event, offset) => ({ event, offset })) };
        yield { events: blocks(3n).map((event, offset) => ({ event, offset })) };
      } finally {
        released = true;
      }
    },
  };
  const aborted = new RecordingStore();
  await ingest(stoppable, aborted, { commit: { maxBlocks: 100, idleMs: 60_000, maxDelayMs: 60_000 } }, controller.signal);
  assert.deepEqual(aborted.blocks.map((b) => b.height), [1n, 2n]);
  assert.deepEqual(aborted.commits, [2]);
  assert.ok(released, 'the source was released');
});

/** A store that takes a while per write, and can be told to fail one (and, as the contract asks, those behind it). */
class SlowStore extends RecordingStore {
  outstanding = 0;
  private failed = false;
  mostOutstanding = 0;
  readonly calls: bigint[][] = [];
  constructor(private readonly failAt?: bigint) {
    super();
  }
  override async write(group: BlockList) {
    const { blocks } = group;
    this.calls.push(blocks.map((b) => b.height));
    this.mostOutstanding = Math.max(this.mostOutstanding, ++this.outstanding);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.outstanding--;
    if (this.failed) throw new Error('not written: an earlier write failed');
    if (blocks.some((b) => b.height === this.failAt)) {
      this.failed = true;
      throw new Error('disk full');
    }
    await super.write(group);
  }
}

test('the next group is read while a slow store writes, at most two writes outstanding, in order', async () => {
  const store = new SlowStore();
  const committed: bigint[] = [];
  const heights = Array.from({ length: 30 }, (_, i) => BigInt(i + 1));
  const stats = await ingest(source(blocks(...heights)), store, {
    commit: { maxBlocks: 3 },
    onBlock: (b) => committed.push(b.height),
  });
  assert.equal(store.mostOutstanding, 2, 'writes overlapped, two deep and no deeper');
  assert.deepEqual(store.calls.flat(), heights);
  assert.deepEqual(committed, heights, 'reported as each write completes, in order');
  assert.equal(stats.blocksCommitted, 30);
  assert.equal(store.outstanding, 0, 'nothing still being written when ingest returns');
});

test('a failed write stops ingestion with its error; no group is handed over after it is known', async () => {
  const store = new SlowStore(7n);
  const heights = Array.from({ length: 30 }, (_, i) => BigInt(i + 1));
  await assert.rejects(ingest(source(blocks(...heights)), store, { commit: { maxBlocks: 3 } }), /disk full/);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n, 4n, 5n, 6n]);
  // The group of block 7 (7..9) may have had one successor queued behind it, never more.
  assert.ok(store.calls.length <= 4, `${store.calls.length} writes`);
  assert.equal(store.outstanding, 0);
});

test('a block the store refuses as it is added stops ingestion at that block; the blocks before it are stored', async () => {
  class Refusing extends RecordingStore {
    override newGroup() {
      const group = new BlockList();
      const add = group.add.bind(group);
      group.add = (block) => {
        if (block.height === 5n) throw new Error('no room for this block');
        add(block);
      };
      return group;
    }
  }
  const store = new Refusing();
  await assert.rejects(ingest(source(blocks(1n, 2n, 3n, 4n, 5n, 6n)), store, { commit: { maxBlocks: 3 } }), (e: unknown) =>
    e instanceof IngestError && /block 5 cannot be stored: no room for this block/.test(e.message) && e.position?.source === 'test://events',
  );
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n, 4n]);
});

/** Block `h` with one order, whose price `price` gives; the same hash whatever the price. */
const priced = (h: bigint, price = '100') => blockEvents(h, [{ kind: 'order', order: order(Number(h), { price }) }]);

test('a block read again with the stored hash but other events ends ingestion naming every such height; nothing more is written', async () => {
  const store = new RecordingStore();
  // As the scenario that asked for it: a store ingested from a file with one digit of a price changed...
  await ingest(source([1n, 2n, 3n, 4n, 5n, 6n].flatMap((h) => priced(h, h === 2n || h === 3n || h === 5n ? '109' : '100'))), store);
  const stored = store.blocks.map((b) => [b.height, b.orders[0]!.price]);
  // ...then the good file, which holds more blocks.
  const good = [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n].flatMap((h) => priced(h));
  let error: unknown;
  await ingest(source(good), store).catch((e: unknown) => (error = e));
  assert.ok(error instanceof StoredBlockMismatchError, String(error));
  assert.equal(error.exitStatus, 65);
  assert.match(error.message, /^blocks 2\.\.3, 5 are stored with other content than test:\/\/events holds \(the same heights and hashes, other events\); nothing more was written\. /);
  assert.match(error.message, /rebuild it from a good source into a new one/);
  assert.deepEqual(store.blocks.map((b) => [b.height, b.orders[0]!.price]), stored, 'blocks 7 and 8 not written, nothing changed');

  // The file it was stored from, again: the same content.
  const warnings: string[] = [];
  const again = await ingest(source([1n, 2n, 3n, 4n, 5n, 6n].flatMap((h) => priced(h, h === 2n || h === 3n || h === 5n ? '109' : '100'))), store, {
    onWarning: (m) => warnings.push(m),
  });
  assert.equal(again.blocksAlreadyStored, 6);
  assert.equal(again.blocksWithOtherContent, 0);
  assert.deepEqual(warnings, []);
});

test('one block with other content is named alone; a block newer than the store ends reading', async () => {
  const store = new RecordingStore();
  await ingest(source([1n, 2n, 3n].flatMap((h) => priced(h))), store);
  let reads = 0;
  const src: EventSource = {
    name: 'test://more', unit: 'message',
    async *events() {
      for (const h of [1n, 2n, 3n, 4n, 5n]) {
        reads++;
        yield { events: priced(h, h === 3n ? '7' : '100').map((event, offset) => ({ event, offset })) };
      }
    },
  };
  await assert.rejects(ingest(src, store), (e: unknown) =>
    e instanceof StoredBlockMismatchError && /^block 3 is stored with other content than test:\/\/more holds \(the same height and hash, other events\)/.test(e.message));
  assert.equal(reads, 4, 'block 4 ended it: the source was not read further');
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);
});

test('a different hash stays a warning; blocks without a hash or stored without a digest are not compared by content', async () => {
  const store = new RecordingStore();
  await ingest(source([1n, 2n].flatMap((h) => priced(h))), store);
  const warnings: string[] = [];
  const restarted = blockEvents(1n, [{ kind: 'order', order: order(1, { price: '5' }) }], CHAIN, blockHash(1n, 1));
  const stats = await ingest(source([...restarted, ...priced(3n)]), store, { onWarning: (m) => warnings.push(m) });
  assert.equal(stats.blocksWithOtherHash, 1);
  assert.equal(stats.blocksWithOtherContent, 0);
  assert.equal(warnings.length, 1);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);

  // A source without hashes cannot tell a restarted chain from a corrupt block.
  const noHash = blockEvents(2n, [{ kind: 'order', order: order(2, { price: '5' }) }], CHAIN, '');
  assert.equal((await ingest(source(noHash), store)).blocksWithOtherContent, 0);

  // Blocks stored before digests were kept (the migration leaves them '') are compared by their hash only.
  class WithoutDigests extends RecordingStore {
    override async storedBlocks(from: bigint, to: bigint) {
      const kept = await super.storedBlocks(from, to);
      return new Map([...kept].map(([h, b]) => [h, { ...b, digest: '' }]));
    }
  }
  const old = new WithoutDigests();
  await ingest(source([1n, 2n].flatMap((h) => priced(h))), old);
  const quiet = await ingest(source([1n, 2n, 3n].flatMap((h) => priced(h, '9'))), old);
  assert.equal(quiet.blocksWithOtherContent, 0);
  assert.deepEqual(old.blocks.map((b) => b.height), [1n, 2n, 3n]);
});

test('after a mismatch, a source with nothing more for a second ends ingestion; so does a fault, naming both', async (t) => {
  const store = new RecordingStore();
  await ingest(source([1n, 2n, 3n].flatMap((h) => priced(h))), store);
  // A --follow file read to its end, or a core that resent its backlog: it does not end by itself.
  const { source: src, release } = stalling([[1n, 2n].flatMap((h) => priced(h, h === 2n ? '1' : '100'))]);
  // The second is the timers' own, moved by the test: the only timer set is the one that waits for the idle source.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let ended = false;
  const ingesting = ingest(src, store).finally(() => (ended = true));
  ingesting.catch(() => undefined); // awaited below
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };
  await settle();
  t.mock.timers.tick(999);
  await settle();
  assert.equal(ended, false, 'still waiting for the source 999 ms on');
  t.mock.timers.tick(1);
  await assert.rejects(ingesting, (e: unknown) =>
    e instanceof StoredBlockMismatchError &&
      /^block 2 is stored with other content .*; nothing more was written, and blocks after 2 were not compared: the source had nothing more for 1 s\./.test(e.message));
  release();

  const broken: EventSource = {
    name: 'test://broken', unit: 'byte',
    async *events() {
      yield { events: [1n, 2n].flatMap((h) => priced(h, '3')).map((event, offset) => ({ event, offset })) };
      throw new CorruptInputError('record 99 is cut short', { offset: 1234 });
    },
  };
  await assert.rejects(ingest(broken, store), (e: unknown) =>
    e instanceof StoredBlockMismatchError &&
      /^blocks 1\.\.2 are stored .*blocks after 2 were not compared: test:\/\/broken: byte offset 1234, outside any block: record 99 is cut short\./.test(e.message));
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);
});

test('heights are named as ranges', () => {
  assert.equal(heightRanges([5n, 1n, 2n, 3n, 9n, 10n, 3n]), '1..3, 5, 9..10');
  assert.equal(heightRanges([1082n]), '1082');
  assert.equal(heightRanges([]), '');
});
