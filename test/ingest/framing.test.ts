/**
 * The event file's record splitter (src/ingest/framing.ts) on records that
 * span many chunks: as a gzip file or a pipe delivers a large record, 64 KiB
 * at a time, or as a corrupt size makes it wait for megabytes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordSplitter, encodeRecord } from '../../src/ingest/framing.js';

test('a 32 MiB record arriving in 64 KiB chunks is split in linear time, whole and at its offset', (t) => {
  const event = Buffer.alloc(32 << 20, 0x5a);
  const stream = Buffer.concat([encodeRecord(7n, Buffer.from('first')), encodeRecord(8n, event), encodeRecord(9n, Buffer.from('last'))]);
  const splitter = new RecordSplitter();
  const records: { seq: bigint; length: number; offset: number }[] = [];
  // The work is the bytes the splitter copies joining chunks, counted, not timed.
  const concat = t.mock.method(Buffer, 'concat');
  for (let at = 0; at < stream.length; at += 64 << 10) {
    splitter.push(stream.subarray(at, at + (64 << 10)));
    for (let r = splitter.next(); r; r = splitter.next()) records.push({ seq: r.seq, length: r.event.length, offset: r.offset });
  }
  const copied = concat.mock.calls.reduce((n, c) => n + (c.result as Buffer).length, 0);
  concat.mock.restore();
  assert.deepEqual(records, [
    { seq: 7n, length: 5, offset: 0 },
    { seq: 8n, length: event.length, offset: 17 },
    { seq: 9n, length: 4, offset: 17 + 12 + event.length },
  ]);
  assert.equal(splitter.pending, 0);
  assert.equal(splitter.offset, stream.length);
  // Joined once it is whole: the record copied once. Joined on every chunk, as it was: 512 copies of up to 32 MiB, 8 GiB.
  assert.ok(copied >= event.length && copied <= 2 * stream.length, `${copied} bytes copied for a stream of ${stream.length}`);
});

test('bytes still waiting for the rest of their record are counted as pending, from the record\'s offset', () => {
  const a = encodeRecord(1n, Buffer.from('abc'));
  const b = encodeRecord(2n, Buffer.alloc(1000, 1));
  const splitter = new RecordSplitter(100);
  splitter.push(Buffer.concat([a, b.subarray(0, 5)]));
  assert.equal(splitter.next()?.offset, 100);
  assert.equal(splitter.next(), undefined, 'the second record\'s header is not whole yet');
  for (let at = 5; at < 500; at += 7) {
    splitter.push(b.subarray(at, at + 7));
    assert.equal(splitter.next(), undefined);
  }
  assert.equal(splitter.pending, 500 + 2, 'its header and the first 490 bytes of its event');
  assert.equal(splitter.offset, 100 + a.length, 'where the incomplete record starts');
  splitter.push(b.subarray(502));
  const r = splitter.next();
  assert.deepEqual([r?.seq, r?.offset, r?.event.equals(b.subarray(12))], [2n, 100 + a.length, true]);
  assert.equal(splitter.pending, 0);
});
