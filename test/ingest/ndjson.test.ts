import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { IngestError } from '../../src/errors.js';
import { ingest } from '../../src/ingest/ingester.js';
import { busEventFromJson, busEventToJson } from '../../src/ingest/json-codec.js';
import { MAX_LINE_BYTES, ndjsonSource } from '../../src/ingest/ndjson-source.js';
import { blockEvents, order } from '../support/events.js';
import { within } from '../support/fuzz.js';
import { RecordingStore } from '../support/recording-store.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-ndjson-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const events = [1n, 2n].flatMap((h) => blockEvents(h, [
  { kind: 'order', order: order(Number(h), { size: 2n ** 63n + 5n, reason: 14, peggedOrder: { reference: 1, offset: '3' } }) },
  { kind: 'nodeSignature', nodeSignature: { id: 'ab', sig: new Uint8Array([1, 2, 250]), kind: 3 } },
  { kind: 'signerAdded', signerAdded: { signatureId: 's', validatorId: 'v', timestamp: 5n, newSigner: 'n', submitter: 'x', nonce: '1', epochSeq: 3n } },
]));
const ndjson = (evs = events) => evs.map((e) => JSON.stringify(busEventToJson(e))).join('\n') + '\n';

test('protobuf JSON round-trips every stored kind, 64-bit values exactly', () => {
  for (const e of events) {
    const back = busEventFromJson(JSON.parse(JSON.stringify(busEventToJson(e))));
    assert.deepEqual(JSON.stringify(busEventToJson(back)), JSON.stringify(busEventToJson(e)));
  }
});

test('snake_case names, enum numbers and numeric int64 are accepted as protobuf JSON allows', () => {
  const e = busEventFromJson({
    id: '1-1', block: '1', chain_id: 'c',
    order: { id: 'ab'.repeat(32), market_id: 'm', time_in_force: 3, status: 'STATUS_PARKED', created_at: 12, iceberg_order: { peak_size: '4' } },
  });
  assert.ok(e.kind === 'order');
  assert.equal(e.chainId, 'c');
  assert.equal(e.order.marketId, 'm');
  assert.equal(e.order.timeInForce, 3);
  assert.equal(e.order.status, 8);
  assert.equal(e.order.createdAt, 12n);
  assert.equal(e.order.icebergOrder?.peakSize, 4n);
});

test('bad field values are refused naming the field', () => {
  assert.throws(() => busEventFromJson({ order: { status: 'STATUS_NOPE' } }), /event\.order\.status: expected a Order\.Status name or number/);
  assert.throws(() => busEventFromJson({ order: { size: '1.5' } }), /event\.order\.size: expected an integer/);
  assert.throws(() => busEventFromJson({ order: { size: '-1' } }), /out of uint64 range/);
  assert.throws(() => busEventFromJson([]), /must be a JSON object/);
});

test('an NDJSON file is ingested block by block; unknown types are counted by name', async () => {
  const other = { id: '2-9', block: events.at(-1)!.block, type: 'BUS_EVENT_TYPE_TRADE', chainId: events[0]!.chainId, trade: {} };
  const lines = ndjson(events.slice(0, -1)) + JSON.stringify(other) + '\n' + JSON.stringify(busEventToJson(events.at(-1)!));
  const path = join(dir, 'ok.ndjson');
  writeFileSync(path, lines); // last line has no newline
  const store = new RecordingStore();
  const stats = await ingest(ndjsonSource(path), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n]);
  assert.equal(store.blocks[0]?.orders[0]?.size, 2n ** 63n + 5n);
  assert.deepEqual(stats.skippedByType, { TRADE: 1 });
});

test('stdin works, and a broken line stops at its byte offset without a partial block', async () => {
  const good = ndjson(events.slice(0, 6)); // block 1 (5 events) and block 2's BeginBlock
  const input = Readable.from([Buffer.from(good + '{"id": oops\n' + ndjson(events.slice(6)))]);
  const store = new RecordingStore();
  await assert.rejects(ingest(ndjsonSource('-', input), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /^ndjson:-: byte offset \d+, in block 2: not JSON/);
    assert.equal(e.position?.offset, Buffer.byteLength(good));
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

test('a last line cut off mid-line (no newline, not JSON) ends the source with cutOff there, not an error', async () => {
  const good = ndjson(events.slice(0, 7)); // block 1 and two events of block 2
  const partial = JSON.stringify(busEventToJson(events[7]!)).slice(0, 40);
  const path = join(dir, 'cut.ndjson');
  writeFileSync(path, good + partial);
  const offsets: number[] = [];
  let cutOff: { offset: number; bytes: number } | undefined;
  for await (const batch of ndjsonSource(path).events()) {
    assert.equal(cutOff, undefined, 'cutOff comes on the last batch');
    offsets.push(...batch.events.map((e) => e.offset));
    cutOff = batch.cutOff;
  }
  assert.equal(offsets.length, 7);
  assert.deepEqual(cutOff, { offset: Buffer.byteLength(good), bytes: Buffer.byteLength(partial) });

  const store = new RecordingStore();
  await ingest(ndjsonSource(path), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

test('a whole last line (ending in a newline) that is not JSON is still an error', async () => {
  const good = ndjson(events.slice(0, 5));
  const input = Readable.from([Buffer.from(good + '{"id": "2-1", "blo\n')]);
  const store = new RecordingStore();
  await assert.rejects(ingest(ndjsonSource('-', input), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /not JSON/);
    assert.equal(e.position?.offset, Buffer.byteLength(good));
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

/** `chunk` over and over, `times` times or without end. */
function* repeated(chunk: Buffer, times = Infinity): Generator<Buffer> {
  for (let i = 0; i < times; i++) yield chunk;
}

test('a line that never ends is refused once it is longer than an event can be, without reading on', async () => {
  const read = { bytes: 0 };
  const endless = Readable.from((function* () {
    for (const chunk of repeated(Buffer.alloc(64 << 10, 0x61))) {
      read.bytes += chunk.length;
      yield chunk;
    }
  })());
  const store = new RecordingStore();
  const input = Readable.from((async function* () {
    yield Buffer.from(ndjson(events.slice(0, 5)));
    yield* endless;
  })());
  // Before the limit this read on for ever, each chunk copying the line so far.
  await assert.rejects(within(20_000, 'reading an endless line', ingest(ndjsonSource('-', input), store)), (e: unknown) => {
    assert.ok(e instanceof IngestError, String(e));
    assert.match(e.message, /^ndjson:-: byte offset \d+, outside any block: a line longer than 67108864 bytes: not an event$/);
    assert.equal(e.position?.offset, Buffer.byteLength(ndjson(events.slice(0, 5))), 'the line is placed where it starts');
    return true;
  });
  // The streams read a few chunks ahead (16 objects for Readable.from): a MiB at most.
  assert.ok(read.bytes <= MAX_LINE_BYTES + (1 << 20) + (64 << 10), `stopped reading after ${read.bytes} bytes`);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n], 'the block before it is stored');
});

test('a 32 MiB line arriving in 64 KiB chunks is read in linear time', async (t) => {
  const text = Buffer.from(ndjson(blockEvents(1n, [{ kind: 'order', order: order(1, { reference: 'r'.repeat(32 << 20) }) }])));
  const chunks = Array.from({ length: Math.ceil(text.length / (64 << 10)) }, (_, i) => text.subarray(i * (64 << 10), (i + 1) * (64 << 10)));
  const store = new RecordingStore();
  // The work is the bytes the source copies joining chunks into lines, counted, not timed.
  const concat = t.mock.method(Buffer, 'concat');
  await ingest(ndjsonSource('-', Readable.from(chunks)), store);
  const copied = concat.mock.calls.reduce((n, c) => n + (c.result as Buffer).length, 0);
  concat.mock.restore();
  assert.equal(store.blocks[0]?.orders[0]?.reference.length, 32 << 20);
  // Joined once it is whole: the line copied once. Joined again on every chunk, as it was: 512 copies of up to 32 MiB.
  assert.ok(copied >= 32 << 20 && copied <= 2 * text.length, `${copied} bytes copied for ${text.length} bytes of input`);
});
