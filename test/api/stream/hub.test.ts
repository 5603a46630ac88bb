/**
 * The stream hub against a source whose blocks commit whenever the test says:
 * every subscriber gets its snapshot, then every later block that changed
 * what it asks for, once and in order, whenever the blocks commit (before,
 * during or after its snapshot is read); a slow subscriber is closed saying
 * so, and the others go on; a resume starts after the block it names.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Frame, OrderStreamHub, type FrameSink, type OrderStreamSource, type StreamEnd } from '../../../src/api/stream/hub.js';
import type { BlockChanges, StreamFilter } from '../../../src/domain/order-stream.js';
import { orderNodeJson } from '../../../src/store/order-node.js';
import { hex, order } from '../../store/helpers.js';

const ALL: StreamFilter = { marketIds: [], partyIds: [], excludeLiquidity: false };

/** Block h changes order h (market 1000 + h % 3) and, on even heights, order h + 1000 too. */
function changesOf(h: number): BlockChanges {
  const ids = h % 2 === 0 ? [h, h + 1000] : [h];
  return {
    height: BigInt(h),
    changes: ids.map((n) => {
      const o = order(n, { marketId: hex(1000 + (h % 3)) });
      return { node: orderNodeJson(o), marketId: o.marketId, partyId: o.partyId };
    }),
  };
}

class FakeSource implements OrderStreamSource {
  height = 0;
  /** Resolved by the test to let a snapshot read finish: blocks may commit meanwhile. */
  snapshotGate: Promise<void> = Promise.resolve();

  async liveOrders(): Promise<{ height: bigint; nodes: string[] }> {
    const at = BigInt(this.height);
    await this.snapshotGate;
    return { height: at, nodes: [orderNodeJson(order(1))] };
  }

  async orderChanges(after: bigint, upTo: bigint, maxBlocks: number): Promise<BlockChanges[]> {
    await new Promise((r) => setImmediate(r));
    const out: BlockChanges[] = [];
    for (let h = after + 1n; h <= upTo && out.length < maxBlocks; h++) if (h % 5n !== 0n) out.push(changesOf(Number(h)));
    return out;
  }

  async lastHeight(): Promise<bigint> {
    return BigInt(this.height);
  }

  async firstChangeHeight(): Promise<bigint> {
    return 1n;
  }
}

class Sink implements FrameSink {
  frames: string[] = [];
  ended: StreamEnd | undefined;
  stalled = 0;
  send(frame: Frame): void {
    this.frames.push(frame.text);
  }
  buffered(): number {
    return this.stalled;
  }
  end(reason: StreamEnd): void {
    this.ended = reason;
  }
  /** The heights of the orders each updates frame carried, in order. */
  updatedIds(): string[] {
    return this.frames
      .map((f) => JSON.parse(f) as { result: { updates?: { orders: { id: string }[] } } })
      .flatMap((f) => f.result.updates?.orders.map((o) => o.id) ?? []);
  }
}

/** The ids every block from `from` to `to` changed, in order, as the source gives them. */
function expectedIds(from: number, to: number, keep: (marketId: string) => boolean = () => true): string[] {
  const ids: string[] = [];
  for (let h = from; h <= to; h++) {
    if (h % 5 === 0) continue;
    for (const c of changesOf(h).changes) if (keep(c.marketId)) ids.push(JSON.parse(c.node).id as string);
  }
  return ids;
}


test('a snapshot, then every later block once and in order, blocks committing before, during and after the snapshot', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1 << 20, readBlocks: 3 });
  source.height = 4;
  let open!: () => void;
  source.snapshotGate = new Promise((r) => (open = r));
  const sink = new Sink();
  const subscribing = hub.subscribe(ALL, sink);
  // Blocks commit while the snapshot (read at block 4) is on its way.
  for (const h of [5, 6, 7]) {
    source.height = h;
    hub.blockCommitted();
  }
  open();
  await subscribing;
  for (const h of [8, 9, 10, 11, 12, 13]) {
    source.height = h;
    hub.blockCommitted();
    if (h % 2 === 0) await hub.settled();
  }
  await hub.settled();
  assert.match(sink.frames[0]!, /^\{"result":\{"snapshot":\{"orders":\[.*\],"lastPage":true\}\}\}$/);
  assert.deepEqual(sink.updatedIds(), expectedIds(5, 13));
  assert.equal(sink.ended, undefined);
});

test('subscribers with the same filter share frames; each gets only what its filter passes', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1 << 20 });
  const market = hex(1001);
  const all = new Sink();
  const one = new Sink();
  const upper = new Sink();
  await hub.subscribe(ALL, all);
  await hub.subscribe({ marketIds: [market], partyIds: [], excludeLiquidity: false }, one);
  // The original compares update filters as strings with lower-case ids: an upper-case id never matches.
  await hub.subscribe({ marketIds: [market.toUpperCase()], partyIds: [], excludeLiquidity: false }, upper);
  for (let h = 1; h <= 9; h++) {
    source.height = h;
    hub.blockCommitted();
  }
  await hub.settled();
  assert.deepEqual(all.updatedIds(), expectedIds(1, 9));
  assert.deepEqual(one.updatedIds(), expectedIds(1, 9, (m) => m === market));
  assert.ok(one.updatedIds().length > 0);
  assert.deepEqual(upper.updatedIds(), []);
  assert.equal(hub.size, 3);
});

test('a subscriber that leaves too much unread is closed, saying so; the others go on', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1000 });
  const slow = new Sink();
  const fast = new Sink();
  await hub.subscribe(ALL, slow);
  await hub.subscribe(ALL, fast);
  slow.stalled = 5000;
  for (let h = 1; h <= 4; h++) {
    source.height = h;
    hub.blockCommitted();
  }
  await hub.settled();
  assert.deepEqual(slow.ended, { kind: 'tooSlow', buffered: 5000, limit: 1000 });
  assert.deepEqual(fast.updatedIds(), expectedIds(1, 4));
  assert.equal(hub.size, 1);
});

test('past the budget all subscribers share, one with bytes unread is closed as its next frame comes; one that reads goes on', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1 << 20, sharedBufferBytes: 3000 });
  const slow = [new Sink(), new Sink()];
  const reader = new Sink();
  for (const sink of [...slow, reader]) await hub.subscribe(ALL, sink);
  // Each under its own limit, together near the shared one.
  slow[0]!.stalled = 1400;
  slow[1]!.stalled = 1400;
  for (let h = 1; h <= 4; h++) {
    source.height = h;
    hub.blockCommitted();
  }
  await hub.settled();
  assert.deepEqual(slow.map((s) => s.ended?.kind), ['tooSlow', 'tooSlow']);
  assert.deepEqual(slow[0]!.ended, { kind: 'tooSlow', buffered: 1400, limit: 3000, shared: true });
  assert.equal(reader.ended, undefined);
  assert.deepEqual(reader.updatedIds(), expectedIds(1, 4));
  assert.equal(hub.size, 1);
});

test('a resume from a block gets the changes after it, no snapshot, then the live blocks', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1 << 20, readBlocks: 2 });
  source.height = 12;
  const sink = new Sink();
  await hub.subscribe(ALL, sink, 6n);
  source.height = 14;
  hub.blockCommitted();
  await hub.settled();
  assert.doesNotMatch(sink.frames.join('\n'), /snapshot/);
  assert.deepEqual(sink.updatedIds(), expectedIds(7, 14));
});

test('subscribers arriving together while blocks commit each get every block once: a late read of the last height does not move the hub past what it dispatched', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1 << 20, readBlocks: 100 });
  source.height = 1;
  // The second subscriber's read of the last height is slow: it answers after blocks 2-6 committed.
  let slowRead!: () => void;
  const gate = new Promise<void>((r) => (slowRead = r));
  const reads: number[] = [];
  source.lastHeight = async () => {
    reads.push(reads.length);
    if (reads.length === 2) await gate;
    return BigInt(source.height);
  };
  const first = new Sink();
  const second = new Sink();
  const subscribingFirst = hub.subscribe(ALL, first, 0n);
  const subscribingSecond = hub.subscribe(ALL, second, 0n);
  await subscribingFirst;
  for (const h of [2, 3, 4, 5, 6]) source.height = h;
  slowRead();
  await subscribingSecond;
  for (const h of [7, 8]) {
    source.height = h;
    hub.blockCommitted();
    await hub.settled();
  }
  assert.deepEqual(first.updatedIds(), expectedIds(1, 8), 'the first subscriber: every block');
  assert.deepEqual(second.updatedIds(), expectedIds(1, 8), 'the second subscriber: every block');
});

test('the block watch runs only while someone is subscribed, and what it sees is dispatched', async () => {
  const source = new FakeSource();
  let watching: (() => void) | undefined;
  let started = 0;
  const hub = new OrderStreamHub(source, {
    bufferBytes: 1 << 20,
    watchBlocks: (onBlock) => {
      started++;
      watching = onBlock;
      return () => (watching = undefined);
    },
  });
  assert.equal(watching, undefined);
  const first = new Sink();
  const leave = await hub.subscribe(ALL, first);
  const second = new Sink();
  await hub.subscribe(ALL, second);
  assert.equal(started, 1);
  for (const h of [1, 2, 3]) {
    source.height = h;
    watching!();
  }
  await hub.settled();
  assert.deepEqual(first.updatedIds(), expectedIds(1, 3));
  leave();
  assert.notEqual(watching, undefined);
  hub.close();
  assert.equal(watching, undefined);
  // A subscriber after nobody starts it again.
  await hub.subscribe(ALL, new Sink());
  assert.equal(started, 2);
  assert.notEqual(watching, undefined);
});

test('a subscriber whose catch-up finds no changes while blocks are dispatched to the others still gets those blocks', async () => {
  const source = new FakeSource();
  const hub = new OrderStreamHub(source, { bufferBytes: 1 << 20 });
  // Block 5 changed nothing (the fake leaves out every fifth), as the first block written often does.
  source.height = 5;
  const live = new Sink();
  await hub.subscribe(ALL, live, 4n);
  // The late subscriber's read of block 5 is slow: it finds nothing, after blocks 6-8 went to the live one.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const holding = new Promise<void>((r) => (held = r));
  const read = source.orderChanges.bind(source);
  source.orderChanges = async (after, upTo, maxBlocks) => {
    if (after === 4n) {
      held();
      await gate;
    }
    return read(after, upTo, maxBlocks);
  };
  const late = new Sink();
  const subscribing = hub.subscribe(ALL, late, 4n);
  await holding;
  source.height = 8;
  hub.blockCommitted();
  await hub.settled();
  release();
  await subscribing;
  source.height = 9;
  hub.blockCommitted();
  await hub.settled();
  assert.deepEqual(live.updatedIds(), expectedIds(5, 9), 'the live subscriber: every block');
  assert.deepEqual(late.updatedIds(), expectedIds(5, 9), 'the late subscriber: every block, 6-8 too');
});
