import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { constants as zlib, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import { CorruptInputError, IngestError, UsageError } from '../../src/errors.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import type { EventSource, EventBatch } from '../../src/ingest/source.js';
import { blockEvents, eventFile, order } from '../support/events.js';
import { REAL, realRecording } from '../support/real-recording.js';
import { RecordingStore } from '../support/recording-store.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-file-source-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const threeBlocks = [1n, 2n, 3n].flatMap((h) =>
  blockEvents(h, [{ kind: 'order', order: order(Number(h)) }, { kind: 'other' }]),
);
/** Large enough for several chunks of every reader (~1,000 events). */
const manyEvents = Array.from({ length: 100 }, (_, b) => BigInt(b + 1)).flatMap((h) =>
  blockEvents(h, Array.from({ length: 8 }, (_, i) => ({ kind: 'order' as const, order: order(Number(h) * 10 + i) }))),
);
const manyFile = eventFile(manyEvents);

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

/** Offsets of the records that lie wholly within `file`'s first `length` bytes. */
function wholeRecords(file: Buffer, length = file.length): number[] {
  const offsets: number[] = [];
  for (let at = 0; at + 4 <= length && at + 4 + file.readUInt32BE(at) <= length; at += 4 + file.readUInt32BE(at)) offsets.push(at);
  return offsets;
}

interface Read {
  offsets: number[];
  ids: string[];
  cutOff: EventBatch['cutOff'];
  /** What the source threw (in a pipe reader: its message). */
  error?: unknown;
  unit: EventSource['unit'];
}

/** Everything a source hands over, and how it ended; a cutOff must come on the last batch only. */
async function readAll(source: EventSource): Promise<Read> {
  const read: Read = { offsets: [], ids: [], cutOff: undefined, unit: source.unit };
  try {
    for await (const batch of source.events()) {
      assert.equal(read.cutOff, undefined, 'a batch after the one with cutOff');
      read.offsets.push(...batch.events.map((e) => e.offset));
      read.ids.push(...batch.events.map((e) => e.event.id));
      read.cutOff = batch.cutOff;
    }
  } catch (e) {
    read.error = e;
  }
  read.unit = source.unit;
  return read;
}

const ids = (events: typeof manyEvents) => events.map((e) => e.id);

/** A named pipe in the test folder. */
function fifo(name: string): string {
  const path = join(dir, name);
  const made = spawnSync('mkfifo', [path]);
  assert.equal(made.status, 0, `mkfifo: ${made.stderr}`);
  return path;
}

/** A process that opens `fifo` for writing and runs `script` (sh; $1 is `file`) with its output there. */
function writer(fifoPath: string, script: string, file: string): ChildProcess & { exited: Promise<number | null> } {
  const child = spawn('sh', ['-c', `exec > "$2"; ${script}`, 'sh', file, fifoPath], { stdio: ['ignore', 'ignore', 'inherit'] });
  return Object.assign(child, { exited: new Promise<number | null>((resolve) => child.once('exit', resolve)) });
}

test('a whole file is stored block by block, skipped types counted', async () => {
  const store = new RecordingStore();
  const stats = await ingest(fileSource(write('ok.events', eventFile(threeBlocks))), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n, 3n]);
  assert.equal(store.blocks[1]?.orders[0]?.id, order(2).id);
  assert.equal(stats.events, threeBlocks.length);
  assert.deepEqual(stats.skippedByType, { '11': 3 });
});

test('a file cut off inside a record ends normally: every whole record, then cutOff where the partial one starts', async () => {
  const bytes = eventFile(threeBlocks);
  const cut = bytes.length - 3; // inside block 3's EndBlock
  const last = recordOffset(bytes, threeBlocks.length - 1);
  const path = write('truncated.events', bytes.subarray(0, cut));
  const read = await readAll(fileSource(path));
  assert.equal(read.error, undefined);
  assert.deepEqual(read.ids, ids(threeBlocks.slice(0, -1)));
  assert.deepEqual(read.cutOff, { offset: last, bytes: cut - last });
  assert.equal(read.unit, 'byte');

  // Ingestion stores the whole blocks and does not fail.
  const store = new RecordingStore();
  await ingest(fileSource(path), store);
  assert.deepEqual(store.blocks.map((b) => b.height), [1n, 2n], 'nothing of block 3');
});

test('a file that ends at a record boundary has no cutOff', async () => {
  const bytes = eventFile(threeBlocks);
  const read = await readAll(fileSource(write('boundary.events', bytes.subarray(0, recordOffset(bytes, 4)))));
  assert.equal(read.error, undefined);
  assert.equal(read.ids.length, 4);
  assert.equal(read.cutOff, undefined);
});

test('an absurd size field is refused at its offset', async () => {
  const bytes = Buffer.from(eventFile(threeBlocks));
  const at = recordOffset(bytes, 5); // a record of block 2
  bytes.writeUInt32BE(0xfffffff0, at);
  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(write('size.events', bytes)), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /impossible record size/);
    assert.equal(e.position?.offset, at);
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
    assert.equal(e.position?.offset, at);
    return true;
  });
  assert.deepEqual(store.blocks.map((b) => b.height), [1n]);
});

test('events are decoded and handed over a few at a time, every one once and in order', async () => {
  const sizes: number[] = [];
  const offsets: number[] = [];
  for await (const batch of fileSource(write('many.events', manyFile)).events()) {
    sizes.push(batch.events.length);
    offsets.push(...batch.events.map((e) => e.offset));
  }
  assert.ok(Math.max(...sizes) <= 128, `batches of ${sizes.join(', ')}`);
  assert.equal(offsets.length, manyEvents.length);
  assert.ok(offsets.every((o, i) => i === 0 || o > offsets[i - 1]!), 'offsets rise');
});

test('the first sequence number may be any number (the real file starts at 0)', async () => {
  const read = await readAll(fileSource(write('from-zero.events', eventFile(threeBlocks, 0n))));
  assert.equal(read.error, undefined);
  assert.equal(read.ids.length, threeBlocks.length);
});

// --- gzip -------------------------------------------------------------------

test('a gzip file is read as it is: the same events, offsets in the uncompressed stream', async () => {
  // Named without .gz: gzip is recognised by its first bytes.
  const source = fileSource(write('many.bin', gzipSync(manyFile)));
  const read = await readAll(source);
  assert.equal(read.error, undefined);
  assert.equal(read.unit, 'uncompressed byte');
  assert.deepEqual(read.ids, ids(manyEvents));
  assert.deepEqual(read.offsets, wholeRecords(manyFile));
  assert.equal(read.cutOff, undefined);
});

test('concatenated gzip members are one stream, even split inside a record', async () => {
  const cuts = [0, 1000, recordOffset(manyFile, 300) + 7, 150_000, manyFile.length];
  const members = cuts.slice(1).map((end, i) => gzipSync(manyFile.subarray(cuts[i], end)));
  const read = await readAll(fileSource(write('members.events.gz', Buffer.concat(members))));
  assert.equal(read.error, undefined);
  assert.deepEqual(read.ids, ids(manyEvents));
  assert.deepEqual(read.offsets, wholeRecords(manyFile));
  assert.equal(read.cutOff, undefined);
});

test('a gzip file cut short inside its only member hands over nothing of it, and fails saying it is cut', async () => {
  const gz = gzipSync(manyFile);
  const path = write('cut-only.events.gz', gz.subarray(0, Math.floor(gz.length * 0.6)));
  const read = await readAll(fileSource(path));
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.match(read.error.message, /^gzip member 1 \(from compressed byte offset 0\) is cut short: the stream ends in its compressed data, \d+ bytes into the member, before its CRC-32 and length; nothing of it is stored/);
  assert.equal(read.error.offset, 0);
  assert.deepEqual(read.ids, []);
  assert.equal(read.unit, 'uncompressed byte');

  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(path), store), (e: unknown) => e instanceof IngestError && /is cut short/.test(e.message));
  assert.deepEqual(store.blocks, [], 'no block of the unverified member');
});

test('a gzip file cut short inside a later member: the records of the members before it, nothing of the cut one', async () => {
  const cuts = [0, 40_000, recordOffset(manyFile, 300) + 7, 150_000, manyFile.length];
  const members = cuts.slice(1).map((end, i) => gzipSync(manyFile.subarray(cuts[i], end)));
  const start = members[0]!.length + members[1]!.length;
  const cut = Buffer.concat([...members.slice(0, 2), members[2]!.subarray(0, 100)]);
  const read = await readAll(fileSource(write('cut-later.events.gz', cut)));
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.match(read.error.message, new RegExp(`^gzip member 3 \\(from compressed byte offset ${start}\\) is cut short`));
  assert.equal(read.error.offset, cuts[2]);
  assert.deepEqual(read.offsets, wholeRecords(manyFile, cuts[2]));
  assert.equal(read.cutOff, undefined);
});

test('with acceptUnverified, a gzip file cut short ends normally: every whole record it holds, then cutOff in uncompressed bytes', async () => {
  const gz = gzipSync(manyFile);
  const cut = gz.subarray(0, Math.floor(gz.length * 0.6));
  // What the cut file holds: all zlib can decompress of it (its documented way to read truncated input).
  const held = gunzipSync(cut, { finishFlush: zlib.Z_SYNC_FLUSH }).length;
  const whole = wholeRecords(manyFile, held);
  assert.ok(whole.length > 100 && whole.length < manyEvents.length, `${whole.length} whole records`);
  const read = await readAll(fileSource(write('cut.events.gz', cut), { acceptUnverified: true }));
  assert.equal(read.error, undefined);
  assert.deepEqual(read.ids, ids(manyEvents.slice(0, whole.length)));
  assert.deepEqual(read.offsets, whole);
  const partial = recordOffset(manyFile, whole.length);
  assert.deepEqual(read.cutOff, { offset: partial, bytes: held - partial });
  assert.equal(read.unit, 'uncompressed byte');
});

test('a gzip member that zlib refuses fails, named, at the uncompressed offset where it starts, after the events before it', async () => {
  const first = gzipSync(manyFile.subarray(0, 150_000));
  const second = gzipSync(manyFile.subarray(150_000));
  second[2] = 7; // compression method 7 does not exist
  const path = write('corrupt.events.gz', Buffer.concat([first, second]));
  const read = await readAll(fileSource(path));
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.equal(read.error.message, `gzip member 2 (from compressed byte offset ${first.length}) fails its check: its compression method is 7, not DEFLATE (8); nothing of it is stored`);
  assert.equal(read.error.offset, 150_000);
  assert.ok(read.offsets.length > 0, 'the events before it are handed over');
  assert.deepEqual(read.offsets, wholeRecords(manyFile, 150_000));
  assert.equal(read.cutOff, undefined);

  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(path), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /: uncompressed byte offset 150000, in block \d+: gzip member 2 .* fails its check/);
    return true;
  });
  assert.ok(store.blocks.length > 0, 'the whole blocks before it are stored');
});

/** Three blocks whose order of block 2 has a price found nowhere else in the file. */
const pricedBlocks = [1n, 2n, 3n].flatMap((h) => blockEvents(h, [{ kind: 'order', order: order(Number(h), h === 2n ? { price: '987654321' } : {}) }]));

/** A gzip of `file` stored uncompressed (level 0), with one digit of the price changed inside it: DEFLATE still decodes, only the CRC-32 tells. */
function alteredPrice(file: Buffer): Buffer {
  const gz = gzipSync(file, { level: 0 });
  const at = gz.indexOf('987654321');
  assert.ok(at > 0 && gz.indexOf('987654321', at + 1) < 0, 'the price once in the gzip');
  gz[at] = 0x31; // 187654321
  // Its DEFLATE data (after zlib's 10-byte header, before the 8-byte trailer) still inflate, to the changed price.
  assert.ok(inflateRawSync(gz.subarray(10, gz.length - 8)).includes('187654321'), 'the changed price decodes');
  return gz;
}

test('a gzip member whose data fails its CRC-32 hands over nothing of itself: no event before the check', async () => {
  const path = write('altered.events.gz', alteredPrice(eventFile(pricedBlocks)));
  const read = await readAll(fileSource(path));
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.match(read.error.message, /^gzip member 1 \(from compressed byte offset 0\) fails its check: the CRC-32 of its data is 0x[0-9a-f]{8}, its trailer says 0x[0-9a-f]{8}; nothing of it is stored$/);
  assert.equal(read.error.offset, 0);
  assert.deepEqual(read.ids, [], 'not one event of the member');

  const store = new RecordingStore();
  await assert.rejects(ingest(fileSource(path), store), (e: unknown) => {
    assert.ok(e instanceof IngestError);
    assert.match(e.message, /: uncompressed byte offset 0, outside any block: gzip member 1 .* fails its check/);
    return true;
  });
  assert.deepEqual(store.blocks, [], 'no block stored, so no altered price');
});

test('a failing member between good ones: the records of the members before it only', async () => {
  const file = eventFile(pricedBlocks);
  const split = [recordOffset(file, 2), recordOffset(file, 7), file.length];
  const members = [gzipSync(file.subarray(0, split[0])), alteredPrice(file.subarray(split[0], split[1])), gzipSync(file.subarray(split[1]))];
  const read = await readAll(fileSource(write('altered-middle.events.gz', Buffer.concat(members))));
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.match(read.error.message, new RegExp(`^gzip member 2 \\(from compressed byte offset ${members[0]!.length}\\) fails its check: the CRC-32`));
  assert.equal(read.error.offset, split[0]);
  assert.deepEqual(read.offsets, wholeRecords(file, split[0]));
});

test('bytes after the last member that start no member fail, after every record', async () => {
  const read = await readAll(fileSource(write('trailing.events.gz', Buffer.concat([gzipSync(manyFile), Buffer.from('junk')]))));
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.match(read.error.message, /^gzip member 2 \(from compressed byte offset \d+\) fails its check: it does not start as a gzip member does \(1f 8b\) but with 6a75/);
  assert.equal(read.error.offset, manyFile.length);
  assert.deepEqual(read.offsets, wholeRecords(manyFile));
});

test('a gzip file changed in place after its check is refused, not read as the bytes that were checked', async (t) => {
  const gz = gzipSync(manyFile, { level: 0 });
  const path = write('changing.events.gz', gz);
  // The file is written again between its check and its reading, at the reading's first look at it (the handle's
  // second stat: the first stamps the file before the check). Its bytes are the same; its modification time is not.
  const probe = await open(path);
  const handles = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const stat = handles.stat;
  let looks = 0;
  t.mock.method(handles, 'stat', function (this: FileHandle, ...args: Parameters<FileHandle['stat']>) {
    if (++looks === 2) {
      writeFileSync(path, gz);
      const mtime = statSync(path).mtime;
      utimesSync(path, mtime, new Date(mtime.getTime() + 2000));
    }
    return stat.apply(this, args);
  });
  let seen = 0;
  let error: unknown;
  try {
    for await (const batch of fileSource(path).events()) seen += batch.events.length;
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof CorruptInputError, String(error));
  assert.match(error.message, /the file changed after its gzip members were checked/);
  assert.equal(seen, 0, 'not one event of the changed file');
  assert.equal(looks, 2);
});

test('a directory is not an event file: a usage error naming it', async () => {
  const sub = join(dir, 'a-directory');
  mkdirSync(sub);
  const read = await readAll(fileSource(sub));
  assert.ok(read.error instanceof UsageError, String(read.error));
  assert.equal(read.error.message, `not a file: ${sub} is a directory`);
});

test('a gzip file cannot be followed: refused when opened', async () => {
  const source = fileSource(write('follow.events.gz', gzipSync(manyFile)), { follow: true });
  const read = await readAll(source);
  assert.ok(read.error instanceof CorruptInputError, String(read.error));
  assert.match(read.error.message, /gzip-compressed.*cannot be followed/);
  assert.equal(read.ids.length, 0);
});

test('a followed plain file is read as it grows; a record half written when it stops is no cut-off', async () => {
  const path = write('growing.events', manyFile.subarray(0, recordOffset(manyFile, 10) + 5));
  const stop = new AbortController();
  const seen: number[] = [];
  let cutOff: EventBatch['cutOff'];
  for await (const batch of fileSource(path, { follow: true, pollMs: 10, signal: stop.signal }).events()) {
    seen.push(...batch.events.map((e) => e.offset));
    cutOff ??= batch.cutOff;
    if (seen.length === 10) appendFileSync(path, manyFile.subarray(recordOffset(manyFile, 10) + 5, recordOffset(manyFile, 20) + 5));
    if (seen.length === 20) stop.abort();
  }
  assert.deepEqual(seen, wholeRecords(manyFile).slice(0, 20));
  assert.equal(cutOff, undefined);
});

// --- pipes and FIFOs ----------------------------------------------------------

/** Reads `<(cat FILE)` (a pipe, /dev/fd/63) in a separate process, as a shell user does. */
const PIPE_READER = `
const { fileSource } = await import(process.argv[1]);
const source = fileSource(process.argv[2]);
const out = { offsets: [], ids: [] };
try {
  for await (const b of source.events()) {
    out.offsets.push(...b.events.map((e) => e.offset));
    out.ids.push(...b.events.map((e) => e.event.id));
    if (b.cutOff) out.cutOff = b.cutOff;
  }
} catch (e) {
  out.error = e.message;
}
out.unit = source.unit;
out.name = source.name;
console.log(JSON.stringify(out));
`;

/** The temporary folder of the pipe readers: a gzip pipe is spooled there, and nothing may be left. */
const pipeTmp = join(dir, 'pipe-tmp');
mkdirSync(pipeTmp);

async function readThroughPipe(file: string): Promise<Read & { name: string }> {
  const module = new URL('../../src/ingest/file-source.js', import.meta.url).href;
  const child = spawn('bash', ['-c', 'exec "$0" --input-type=module -e "$1" "$2" <(cat "$3")', process.execPath, PIPE_READER, module, file], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: pipeTmp },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(status, 0, err);
  return JSON.parse(out) as Read & { name: string };
}

test('a pipe (<(cat file)) is read as a stream to its end: plain, gzip, and cut off', async () => {
  const plain = await readThroughPipe(write('pipe.events', manyFile));
  assert.match(plain.name, /^file:\/\/\/(dev|proc)\//);
  assert.equal(plain.unit, 'byte');
  assert.deepEqual(plain.ids, ids(manyEvents));
  assert.deepEqual(plain.offsets, wholeRecords(manyFile));
  assert.equal(plain.cutOff, undefined);

  const gz = await readThroughPipe(write('pipe.events.gz', gzipSync(manyFile)));
  assert.equal(gz.unit, 'uncompressed byte');
  assert.deepEqual(gz.offsets, wholeRecords(manyFile));
  assert.equal(gz.error, undefined);

  // Checked before anything is handed over, though a pipe is read once: spooled, and the spool gone after.
  const altered = await readThroughPipe(write('pipe-altered.events.gz', alteredPrice(eventFile(pricedBlocks))));
  assert.match(String(altered.error), /^gzip member 1 \(from compressed byte offset 0\) fails its check: the CRC-32/);
  assert.deepEqual(altered.ids, []);
  assert.deepEqual(readdirSync(pipeTmp), [], 'no spool left behind');

  const cut = recordOffset(manyFile, 500) + 9;
  const short = await readThroughPipe(write('pipe-cut.events', manyFile.subarray(0, cut)));
  assert.deepEqual(short.offsets, wholeRecords(manyFile).slice(0, 500));
  assert.deepEqual(short.cutOff, { offset: recordOffset(manyFile, 500), bytes: 9 });
});

test('a FIFO is read until its writer closes it, also when followed; a first read of one byte is enough', async () => {
  const path = fifo('plain.fifo');
  // One byte first: telling gzip from plain must wait for the second.
  const w = writer(path, 'head -c 1 "$1"; sleep 0.2; tail -c +2 "$1"', write('fifo.events', manyFile));
  const read = await readAll(fileSource(path, { follow: true }));
  assert.equal(await w.exited, 0);
  assert.equal(read.error, undefined);
  assert.equal(read.unit, 'byte');
  assert.deepEqual(read.ids, ids(manyEvents));
  assert.deepEqual(read.offsets, wholeRecords(manyFile));
  assert.equal(read.cutOff, undefined);
});

test('a FIFO may carry gzip, cut short too', async () => {
  const path = fifo('gzip.fifo');
  const gz = gzipSync(manyFile);
  const w = writer(path, 'head -c 1 "$1"; sleep 0.2; tail -c +2 "$1"', write('fifo.events.gz', gz));
  const read = await readAll(fileSource(path));
  assert.equal(await w.exited, 0);
  assert.equal(read.error, undefined);
  assert.equal(read.unit, 'uncompressed byte');
  assert.deepEqual(read.offsets, wholeRecords(manyFile));
  assert.equal(read.cutOff, undefined);

  const cut = gz.subarray(0, Math.floor(gz.length / 2));
  const cutFile = write('fifo-cut.events.gz', cut);
  const refusedPath = fifo('gzip-cut-refused.fifo');
  const rw = writer(refusedPath, 'cat "$1"', cutFile);
  const refused = await readAll(fileSource(refusedPath));
  assert.equal(await rw.exited, 0);
  assert.match(String(refused.error), /gzip member 1 \(from compressed byte offset 0\) is cut short/);
  assert.deepEqual(refused.ids, []);

  const cutPath = fifo('gzip-cut.fifo');
  const held = gunzipSync(cut, { finishFlush: zlib.Z_SYNC_FLUSH }).length;
  const cw = writer(cutPath, 'cat "$1"', cutFile);
  const short = await readAll(fileSource(cutPath, { acceptUnverified: true }));
  assert.equal(await cw.exited, 0);
  assert.equal(short.error, undefined);
  assert.deepEqual(short.offsets, wholeRecords(manyFile, held));
  assert.equal(short.cutOff?.offset, recordOffset(manyFile, short.offsets.length));
});

test('a FIFO whose writer is idle stops promptly when its signal aborts', async () => {
  const path = fifo('idle.fifo');
  const w = writer(path, 'cat "$1"; exec sleep 60', write('idle.events', manyFile.subarray(0, recordOffset(manyFile, 50) + 3)));
  const stop = new AbortController();
  let seen = 0;
  let cutOff: EventBatch['cutOff'];
  const reading = (async () => {
    for await (const batch of fileSource(path, { follow: true, signal: stop.signal }).events()) {
      seen += batch.events.length;
      cutOff ??= batch.cutOff;
      // A moment later, so that the reader is waiting on the idle FIFO when it is stopped (either way it must end).
      if (seen === 50) setTimeout(() => stop.abort(), 50);
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  try {
    // Not stopped, the read would last as long as the writer (60 s); the 30 s only tell that apart from a stop.
    const ended = await Promise.race([reading.then(() => 'ended'), new Promise((r) => (timer = setTimeout(r, 30_000, 'still reading')))]);
    assert.equal(ended, 'ended');
    assert.equal(seen, 50);
    assert.equal(cutOff, undefined, 'stopped, not cut off');
  } finally {
    clearTimeout(timer);
    w.kill();
    await w.exited;
  }
});

// --- the real recording ---------------------------------------------------------

test('the network\'s own recording, gzip as it ships, reads whole: 6,964 events, no error, no cut-off', async (t) => {
  const path = realRecording(t);
  if (!path) return;
  const read = await readAll(fileSource(path));
  assert.equal(read.error, undefined);
  assert.equal(read.unit, 'uncompressed byte');
  assert.equal(read.ids.length, REAL.events);
  assert.equal(read.cutOff, undefined);
});
