import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';
import type { Order } from '../../src/domain/order.js';
import { encodeBusEvent } from '../../src/ingest/codec.js';
import { CorruptInputError, IngestError } from '../../src/errors.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { ingest, type IngestStats } from '../../src/ingest/ingester.js';
import {
  encodeSpHeader, encodeSpMessage, pairHeaderProblem, SpMessageSplitter, SpProtocol,
} from '../../src/ingest/nanomsg.js';
import { socketSource, type SocketSource, type SocketSourceOptions } from '../../src/ingest/socket-source.js';
import type { EventBatch } from '../../src/ingest/source.js';
import { blockEvents, order } from '../support/events.js';
import { RecordingStore } from '../support/recording-store.js';
import { SpClient } from '../support/sp-client.js';

const T = { timeout: 15_000 };

/** Keeps the source's log lines and lets a test wait for one. */
class LogRecorder {
  readonly lines: string[] = [];
  private waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];

  readonly log = (level: 'info' | 'warn', msg: string): void => {
    const line = `${level}: ${msg}`;
    this.lines.push(line);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pattern.test(line)) return true;
      w.resolve(line);
      return false;
    });
  };

  waitFor(pattern: RegExp, ms = 10_000): Promise<string> {
    const seen = this.lines.find((l) => pattern.test(l));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no log line ${pattern} within ${ms} ms; got:\n${this.lines.join('\n')}`)), ms);
      this.waiters.push({ pattern, resolve: (line) => { clearTimeout(timer); resolve(line); } });
    });
  }
}

/** Polls until `check` holds, failing early if `failed` settles first; the deadline only stops a hang (tests time out at 15 s). */
async function waitUntil(check: () => boolean, what: string, failed?: Promise<unknown>, ms = 10_000): Promise<void> {
  let settled: unknown;
  failed?.then((v) => (settled ??= { ended: v }), (e: unknown) => (settled ??= { error: e }));
  const deadline = Date.now() + ms;
  while (!check()) {
    if (settled) throw new Error(`${what}: ingestion ended first: ${String((settled as { error?: unknown }).error ?? 'without error')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A socket source on an ephemeral loopback port, ingested into a RecordingStore. */
async function liveIngest(extra: Partial<SocketSourceOptions> = {}) {
  const controller = new AbortController();
  const logs = new LogRecorder();
  const store = new RecordingStore();
  let listening!: (port: number) => void;
  const port = new Promise<number>((resolve) => (listening = resolve));
  const source = socketSource({
    host: '127.0.0.1', port: 0, signal: controller.signal, log: logs.log,
    onListening: (a) => listening(a.port), ...extra,
  });
  const done = ingest(source, store, {}, controller.signal);
  done.catch(() => undefined); // observed by the tests that expect it to fail
  // Stopped after the file whatever a test did, so that a test failing before its stop() leaves nothing listening.
  after(() => controller.abort());
  const heights = () => store.blocks.map((b) => b.height);
  return {
    port: await Promise.race([port, done.then(() => { throw new Error('ingestion ended before listening'); })]),
    source, store, logs, done, heights,
    untilBlocks: (n: number) => waitUntil(() => store.blocks.length >= n, `${n} blocks stored (have ${heights().join(',')})`, done),
    stop: async (): Promise<IngestStats> => {
      controller.abort();
      return done;
    },
  };
}

const ordersOf = (h: bigint, n: number): Order[] =>
  Array.from({ length: n }, (_, i) => order(Number(h) * 100 + i, { version: BigInt(i + 1), size: 2n ** 63n + BigInt(i) }));

const block = (h: bigint, orders = 3): BusEvent[] =>
  blockEvents(h, ordersOf(h, orders).map((o) => ({ kind: 'order', order: o })));

const connectionRefused = (port: number) =>
  assert.rejects(SpClient.connect(port), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');

test('SP framing: header bytes, PAIR check, messages reassembled across any chunking', () => {
  assert.deepEqual([...encodeSpHeader(SpProtocol.PAIR)], [0, 0x53, 0x50, 0, 0, 16, 0, 0]);
  assert.equal(pairHeaderProblem(encodeSpHeader(16)), undefined);
  assert.match(pairHeaderProblem(encodeSpHeader(32))!, /protocol 32 \(PUB\), not PAIR \(16\)/);
  assert.match(pairHeaderProblem(Buffer.from('HTTP/1.1'))!, /not an SP header/);

  fc.assert(fc.property(
    fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }),
    fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 10 }),
    (messages, cuts) => {
      const stream = Buffer.concat(messages.map((m) => encodeSpMessage(m)));
      const splitter = new SpMessageSplitter(300);
      const out: Buffer[] = [];
      for (let at = 0, i = 0; at < stream.length; i++) {
        const size = cuts[i % cuts.length]!;
        splitter.push(stream.subarray(at, at + size));
        at += size;
        for (let m = splitter.next(); m !== undefined; m = splitter.next()) out.push(m);
      }
      assert.deepEqual(out.map((b) => [...b]), messages.map((m) => [...m]));
      assert.equal(splitter.pendingBytes, 0);
    },
  ));

  const splitter = new SpMessageSplitter(10);
  splitter.push(encodeSpMessage(new Uint8Array(11)));
  assert.throws(() => splitter.next(), (e: unknown) => e instanceof CorruptInputError && /11 bytes, above the maximum of 10/.test(e.message));
});

test('a peer pushes several blocks: each arrives once, in order, decoded, and is stored', T, async () => {
  const live = await liveIngest();
  const core = await SpClient.connect(live.port);
  const sent = Array.from({ length: 12 }, (_, i) => block(BigInt(i + 1), 1 + (i % 4)));
  for (const events of sent) await core.sendEvents(events);
  await live.untilBlocks(12);
  const stats = await live.stop();
  await core.closed;

  assert.deepEqual(core.receivedBytes(), encodeSpHeader(SpProtocol.PAIR), 'the listener announces PAIR and sends nothing else');
  assert.deepEqual(live.heights(), sent.map((_, i) => BigInt(i + 1)));
  live.store.blocks.forEach((b, i) => assert.deepEqual(b.orders, ordersOf(BigInt(i + 1), 1 + (i % 4))));
  assert.equal(stats.events, sent.flat().length);
  assert.match(live.source.name, new RegExp(`^socket://127\\.0\\.0\\.1:${live.port}$`));
  assert.ok(live.logs.lines.some((l) => /^info: peer 127\.0\.0\.1:\d+ connected \(SP PAIR\)$/.test(l)));
});

test('a peer of the wrong protocol, or not speaking SP, is refused with a logged reason; a PAIR peer then works', T, async () => {
  const live = await liveIngest();
  const req = await SpClient.connect(live.port, { protocol: SpProtocol.REQ });
  await req.closed;
  await live.logs.waitFor(/^warn: peer 127\.0\.0\.1:\d+ speaks protocol 48 \(REQ\), not PAIR \(16\): refused$/);

  const http = await SpClient.connect(live.port, { header: Buffer.from('GET / HTTP/1.1\r\n') });
  await http.closed;
  await live.logs.waitFor(/^warn: peer 127\.0\.0\.1:\d+ sent 474554202f204854, not an SP header: refused$/);

  const core = await SpClient.connect(live.port);
  await core.sendEvents([...block(1n), ...block(2n)]);
  await live.untilBlocks(2);
  await live.stop();
  assert.deepEqual(live.heights(), [1n, 2n]);
});

test('a peer cut off mid-message loses nothing once the sender resends from the last committed block', T, async () => {
  const live = await liveIngest();
  const [b1, b2, b3, b4, b5] = [1n, 2n, 3n, 4n, 5n].map((h) => block(h, 3)) as [BusEvent[], BusEvent[], BusEvent[], BusEvent[], BusEvent[]];

  const first = await SpClient.connect(live.port);
  await first.sendEvents([...b1, ...b2, ...b3, ...b4.slice(0, 3)]); // block 4: BeginBlock and two orders
  await first.sendHalfOf(b4[3]!); // its third order, cut in half
  await first.destroy();
  // The reason in brackets where the system gives one: Node 24 sees the cut as ECONNRESET, Node 22 as an end.
  await live.logs.waitFor(/^warn: peer 127\.0\.0\.1:\d+ disconnected mid-message after 18 whole messages, \d+ of \d+ payload bytes of a message received( \([^)]+\))?; the incomplete message is dropped$/);
  await live.untilBlocks(3);

  const second = await SpClient.connect(live.port);
  await second.sendEvents([...b3, ...b4, ...b5]); // the core resends from the last block it knows was committed
  await live.untilBlocks(5);
  const stats = await live.stop();

  assert.deepEqual(live.heights(), [1n, 2n, 3n, 4n, 5n]);
  assert.deepEqual(live.store.blocks[3]!.orders, ordersOf(4n, 3), 'block 4 whole, once, nothing of the cut copy');
  assert.equal(stats.blocksAlreadyStored, 1, 'the resent block 3 was skipped');
  assert.equal(stats.events, 18 + 15);
});

test('a second peer is refused while the first one streams', T, async () => {
  const live = await liveIngest();
  const first = await SpClient.connect(live.port);
  await first.sendEvents(block(1n));
  await live.untilBlocks(1);

  const intruder = await SpClient.connect(live.port);
  await intruder.sendEvents(block(7n)).catch(() => undefined); // may meet the reset; must not be read anyway
  await intruder.closed;
  await live.logs.waitFor(/^warn: peer 127\.0\.0\.1:\d+ refused: 127\.0\.0\.1:\d+ is already connected \(PAIR takes one peer at a time\)$/);

  await first.sendEvents(block(2n));
  await live.untilBlocks(2);
  await live.stop();
  assert.deepEqual(live.heights(), [1n, 2n], 'block 7 from the refused peer was never read');
});

test('an oversized or absurd message length drops the peer with a logged reason; the next peer resumes', T, async () => {
  const live = await liveIngest({ maxMessageBytes: 1024 });
  const first = await SpClient.connect(live.port);
  await first.sendEvents(block(1n));
  await first.sendLength(1025n);
  await first.closed;
  await live.logs.waitFor(/^warn: peer 127\.0\.0\.1:\d+ announced a message of 1025 bytes, above the maximum of 1024: dropped/);

  const second = await SpClient.connect(live.port);
  await second.sendLength(2n ** 64n - 1n);
  await second.closed;
  await live.logs.waitFor(/announced a message of 18446744073709551615 bytes, above the maximum of 1024: dropped/);

  const third = await SpClient.connect(live.port);
  await third.sendEvents([...block(1n), ...block(2n)]);
  await live.untilBlocks(2);
  await live.stop();
  assert.deepEqual(live.heights(), [1n, 2n]);
});

test('a message that is not a BusEvent stops ingestion naming the source, message number and block', T, async () => {
  const live = await liveIngest();
  const core = await SpClient.connect(live.port);
  await core.sendEvents([...block(1n, 1), ...block(2n, 1).slice(0, 2)]); // messages 1-5
  await core.send(Buffer.from('not a bus event at all')); // message 6

  await assert.rejects(live.done, (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, new RegExp(`^socket://127\\.0\\.0\\.1:${live.port}: message 6, in block 2: not a BusEvent`));
    assert.equal(e.position?.offset, 6);
    assert.equal(e.blockHeight, 2n);
    return true;
  });
  assert.deepEqual(live.heights(), [1n], 'nothing of block 2 is stored');
  await core.closed; // the failing source closed its peer ...
  await connectionRefused(live.port); // ... and its listener
});

test('back-pressure: a slow consumer stops the reading, the sender blocks, the source holds a bounded amount', T, async () => {
  const maxQueuedBytes = 1024 * 1024;
  let listening!: (port: number) => void;
  const portKnown = new Promise<number>((resolve) => (listening = resolve));
  const logs = new LogRecorder();
  const source: SocketSource = socketSource({
    host: '127.0.0.1', port: 0, log: logs.log, maxQueuedBytes, onListening: (a) => listening(a.port),
  });
  const batches = source.events()[Symbol.asyncIterator]();
  const firstBatch = batches.next(); // starts the listener; the consumer then stalls after one batch
  const core = await SpClient.connect(await portKnown);
  try {
    // 10 kB orders, 32 times what the source may hold, written at once: what the kernel does not take waits in the sender.
    const reference = 'r'.repeat(10_000);
    const big = (n: number): BusEvent => ({ id: `1-${n}`, block: '1', type: 5, chainId: 'c', kind: 'order', order: order(n, { reference }) });
    let sent = 0;
    let sentBytes = 0;
    while (sentBytes < 32 * maxQueuedBytes) {
      const payload = encodeBusEvent(big(sent + 1));
      sent++;
      sentBytes += payload.length;
      core.sendNoWait(payload);
    }
    const first = (await firstBatch).value as EventBatch;
    const firstBytes = first.events.length * encodeBusEvent(big(1)).length;
    // The consumer holds its first batch and asks for nothing more: the queue fills up to its bound, and reading stops.
    await waitUntil(() => source.stats.queuedBytes >= maxQueuedBytes, 'the queue to fill up to its bound');

    assert.ok(core.socket.writableLength > 0, `the sender still holds what the source did not read, of ${sentBytes} bytes`);
    // One socket read (at most 64 kB) is still delivered after the queue reports full.
    assert.ok(source.stats.peakQueuedBytes <= maxQueuedBytes + 128 * 1024, `peak queued ${source.stats.peakQueuedBytes} bytes`);
    assert.ok(source.stats.queuedBytes + firstBytes < sentBytes, 'the rest waits in the kernel and the sender, not in the source');

    // The consumer catches up: every message arrives, in order, numbered from 1.
    const offsets = first.events.map((e) => e.offset);
    while (offsets.length < sent) {
      const next = await batches.next();
      assert.equal(next.done, false);
      for (const e of (next.value as EventBatch).events) offsets.push(e.offset);
    }
    assert.deepEqual(offsets, Array.from({ length: sent }, (_, i) => i + 1));
    assert.equal(source.stats.queuedBytes, 0);
    // However long the consumer stalled, the source never held more than its bound and one read.
    assert.ok(source.stats.peakQueuedBytes <= maxQueuedBytes + 128 * 1024, `peak queued ${source.stats.peakQueuedBytes} bytes`);
  } finally {
    await batches.return?.(undefined);
    await core.closed;
  }
});

test('leaving the for-await or aborting closes the listener and the peer', T, async () => {
  let port = 0;
  const source = socketSource({ host: '127.0.0.1', port: 0, log: () => undefined, onListening: (a) => (port = a.port) });
  const iterating = (async () => {
    for await (const batch of source.events()) {
      assert.equal(batch.events[0]?.event.kind, 'beginBlock');
      break;
    }
  })();
  await waitUntil(() => port !== 0, 'listening');
  const core = await SpClient.connect(port);
  await core.sendEvents(block(1n));
  await iterating;
  await core.closed;
  await connectionRefused(port);

  const controller = new AbortController();
  let idlePort = 0;
  const idle = socketSource({ host: '127.0.0.1', port: 0, signal: controller.signal, log: () => undefined, onListening: (a) => (idlePort = a.port) });
  const batches: EventBatch[] = [];
  const ended = (async () => {
    for await (const batch of idle.events()) batches.push(batch);
  })();
  await waitUntil(() => idlePort !== 0, 'listening');
  controller.abort();
  await ended;
  assert.deepEqual(batches, []);
  await connectionRefused(idlePort);
});

test('a peer that never sends its header is dropped so the slot frees for the next one', T, async () => {
  const live = await liveIngest({ handshakeTimeoutMs: 100 });
  const silent = await SpClient.connect(live.port, { header: Buffer.alloc(0) });
  await silent.closed;
  await live.logs.waitFor(/^warn: peer 127\.0\.0\.1:\d+ sent no SP header within 100 ms: refused$/);
  const core = await SpClient.connect(live.port);
  await core.sendEvents(block(1n));
  await live.untilBlocks(1);
  await live.stop();
  assert.deepEqual(live.heights(), [1n]);
});

test('a port already taken fails with the address in the error', T, async () => {
  const live = await liveIngest();
  const second = socketSource({ host: '127.0.0.1', port: live.port, log: () => undefined });
  await assert.rejects(ingest(second, new RecordingStore()), new RegExp(`^ListenError: cannot listen on 127\\.0\\.0\\.1:${live.port}: listen EADDRINUSE`));
  await live.stop();
});
