import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { IngestError } from '../../src/ingest/errors.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { blockEvents, eventFile, order } from '../support/events.js';
import { RecordingStore } from '../support/recording-store.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-file-source-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const threeBlocks = [1n, 2n, 3n].flatMap((h) =>
  blockEvents(h, [{ kind: 'order', order: order(Number(h)) }, { kind: 'other' }]),
);

function write(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** Byte offset of record `index` in an event file. */
function recordOffset(file: Buffer, index: number): number {
  let at = 0;
  for (let i = 0; i < index; i++) at += 4 + file.readUInt32BE(at);
  return at;
}

test('a whole file is stored block by block, skipped types counted', async () => {
  const store = new RecordingStore();
  const stats = await ingest(fileSource(write('ok.events', eventFile(threeBlocks))), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);
  assert.equal(store.blocks[1]?.orders[0]?.id, order(2).id);
  assert.equal(stats.events, threeBlocks.length);
  assert.deepEqual(stats.skippedByType, { '11': 3 });
});

test('a truncated last record stops after the last whole block, naming file, offset and block', async () => {
  const bytes = eventFile(threeBlocks);
  const cut = bytes.length - 3; // inside block 3's EndBlock
  const path = write('truncated.events', bytes.subarray(0, cut));
  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(path), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /truncated\.events/);
    assert.match(e.message, /truncated record/);
    assert.equal(e.position.offset, recordOffset(bytes, threeBlocks.length - 1));
    assert.equal(e.blockHeight, 3n);
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n], 'nothing of block 3');
});

test('an absurd size field is refused at its offset', async () => {
  const bytes = Buffer.from(eventFile(threeBlocks));
  const at = recordOffset(bytes, 5); // a record of block 2
  bytes.writeUInt32BE(0xfffffff0, at);
  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(write('size.events', bytes)), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /impossible record size/);
    assert.equal(e.position.offset, at);
    assert.equal(e.blockHeight, 2n);
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

test('a flipped size byte misframes the stream and is caught by the sequence numbers', async () => {
  const bytes = Buffer.from(eventFile(threeBlocks));
  const at = recordOffset(bytes, 6);
  bytes[at + 3] = (bytes[at + 3] ?? 0) ^ 0x01; // size off by one
  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(write('flip.events', bytes)), store), IngestError);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

test('an event that fails to decode stops ingestion without storing its block', async () => {
  const events = eventFile(threeBlocks);
  const bad = Buffer.from([0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 7, 0x0a, 0xff, 0xff, 0xff]);
  const at = recordOffset(events, 6);
  const bytes = Buffer.concat([events.subarray(0, at), bad]);
  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(write('undecodable.events', bytes)), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /not a BusEvent/);
    assert.equal(e.position.offset, at);
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

test('events are decoded and handed over a few at a time, every one once and in order', async () => {
  const events = Array.from({ length: 100 }, (_, b) => BigInt(b + 1)).flatMap((h) =>
    blockEvents(h, Array.from({ length: 8 }, (_, i) => ({ kind: 'order' as const, order: order(Number(h) * 10 + i) }))),
  );
  const sizes: number[] = [];
  const offsets: number[] = [];
  for await (const batch of fileSource(write('many.events', eventFile(events))).events()) {
    sizes.push(batch.events.length);
    offsets.push(...batch.events.map((e) => e.offset));
  }
  assert.ok(Math.max(...sizes) <= 128, `batches of ${sizes.join(', ')}`);
  assert.equal(offsets.length, events.length);
  assert.ok(offsets.every((o, i) => i === 0 || o > offsets[i - 1]!), 'offsets rise');
});
