/**
 * The gzip member checker: where members lie, and the first one that is cut
 * or fails, for members built here field by field (RFC 1952) and checked
 * against zlib's own reading of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32, deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import { checkGzipMembers, verifiedEnd, type GzipCheck } from '../../src/ingest/gzip-members.js';

interface MemberFields {
  extra?: Buffer;
  name?: string;
  comment?: string;
  headerCrc?: boolean;
  level?: number;
}

/** One gzip member of `data`, with the optional header fields asked for. */
function member(data: Buffer, fields: MemberFields = {}): Buffer {
  const flags = (fields.headerCrc ? 0x02 : 0) | (fields.extra ? 0x04 : 0) | (fields.name !== undefined ? 0x08 : 0) | (fields.comment !== undefined ? 0x10 : 0);
  const header: Buffer[] = [Buffer.from([0x1f, 0x8b, 8, flags, 1, 2, 3, 4, 0, 3])];
  if (fields.extra) {
    const size = Buffer.alloc(2);
    size.writeUInt16LE(fields.extra.length);
    header.push(size, fields.extra);
  }
  if (fields.name !== undefined) header.push(Buffer.from(`${fields.name}\0`, 'latin1'));
  if (fields.comment !== undefined) header.push(Buffer.from(`${fields.comment}\0`, 'latin1'));
  if (fields.headerCrc) {
    const crc = Buffer.alloc(2);
    crc.writeUInt16LE(crc32(Buffer.concat(header)) & 0xffff);
    header.push(crc);
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(data), 0);
  trailer.writeUInt32LE(data.length % 2 ** 32, 4);
  return Buffer.concat([...header, deflateRawSync(data, { level: fields.level ?? 6 }), trailer]);
}

/** `bytes` in chunks of `size`. */
async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

const check = (bytes: Buffer, size = 1 << 16) => checkGzipMembers(chunks(bytes, size));

/** Data that compresses, but not to nothing. */
function data(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = 0x61 + ((x >>> 16) % 8);
  }
  return out;
}

const parts = [data(3000, 1), data(0, 2), data(70_000, 3), data(10, 4)];
const members = [
  member(parts[0]!),
  member(parts[1]!, { name: 'empty.evt' }),
  member(parts[2]!, { extra: Buffer.from('ab\0cd'), name: 'x', comment: 'a comment', headerCrc: true }),
  member(parts[3]!, { level: 0, headerCrc: true }),
];
const stream = Buffer.concat(members);
const starts = members.map((_, i) => members.slice(0, i).reduce((n, m) => n + m.length, 0));
const dataStarts = parts.map((_, i) => parts.slice(0, i).reduce((n, p) => n + p.length, 0));

test('the members built here are gzip as zlib reads it', () => {
  assert.deepEqual(gunzipSync(stream), Buffer.concat(parts));
});

test('every member is found where it lies, in compressed and uncompressed bytes, whatever the chunks', async () => {
  const expected = members.map((m, i) => ({
    start: starts[i]!, end: starts[i]! + m.length, uncompressedStart: dataStarts[i]!, uncompressedEnd: dataStarts[i]! + parts[i]!.length,
  }));
  for (const size of [1, 2, 7, 1000, 1 << 20]) {
    const result = await check(stream, size);
    assert.deepEqual(result, { members: expected, compressedBytes: stream.length }, `chunks of ${size}`);
    assert.equal(verifiedEnd(result), stream.length);
  }
});

test('an empty stream has no member and no fault', async () => {
  assert.deepEqual(await check(Buffer.alloc(0)), { members: [], compressedBytes: 0 });
});

test('a stream cut at any byte: the members before the cut verify, the one it ends inside is cut, and nothing after', async () => {
  for (let length = 1; length < stream.length; length++) {
    const result = await check(stream.subarray(0, length), 997);
    const whole = starts.filter((s, i) => s + members[i]!.length <= length).length;
    assert.equal(result.members.length, whole, `cut at ${length}`);
    if (starts.includes(length)) {
      // A cut between members leaves whole members only.
      assert.equal(result.fault, undefined, `cut at ${length}`);
      continue;
    }
    assert.equal(result.fault?.kind, 'cut', `cut at ${length}: ${JSON.stringify(result.fault)}`);
    assert.equal(result.fault.member, whole + 1);
    assert.equal(result.fault.start, starts[whole]);
    assert.equal(result.fault.uncompressedStart, dataStarts[whole]);
    assert.match(result.fault.reason, /^the stream ends (in its header|in its compressed data|before its trailer|in its trailer).*, \d+ bytes? into the member, before its CRC-32 and length$/);
  }
});

/** `stream` with the byte at `at` replaced by `value`. */
function altered(at: number, value: (old: number) => number): Buffer {
  const bytes = Buffer.from(stream);
  bytes[at] = value(bytes[at]!);
  return bytes;
}

/** The fault of `bytes`, with the members before it checked. */
async function faultOf(bytes: Buffer, verifiedMembers: number): Promise<NonNullable<GzipCheck['fault']>> {
  const result = await check(bytes, 4096);
  assert.equal(result.members.length, verifiedMembers, JSON.stringify(result));
  assert.ok(result.fault, 'a fault');
  assert.equal(result.fault.kind, 'corrupt');
  assert.equal(result.fault.member, verifiedMembers + 1);
  assert.equal(result.fault.start, starts[verifiedMembers] ?? stream.length);
  return result.fault;
}

test('a member whose data does not match its CRC-32 fails, naming both; the members before it verify', async () => {
  // Member 4 is stored uncompressed (level 0): a changed byte of data still inflates, and only the CRC-32 tells.
  const at = members[3]!.length - 8 - 3;
  assert.equal(stream[starts[3]! + at], parts[3]![7]);
  const fault = await faultOf(altered(starts[3]! + at, (b) => b ^ 0x01), 3);
  assert.match(fault.reason, /^the CRC-32 of its data is 0x[0-9a-f]{8}, its trailer says 0x[0-9a-f]{8}$/);
  assert.equal(fault.uncompressedStart, dataStarts[3]);
});

test('a trailer whose CRC-32 or length is wrong fails', async () => {
  const end = starts[1]!;
  assert.match((await faultOf(altered(end - 8, (b) => b ^ 0x80), 0)).reason, /CRC-32 of its data is .*, its trailer says/);
  assert.equal((await faultOf(altered(end - 4, (b) => b + 1), 0)).reason, 'its data is 3000 bytes, its trailer says 3001 (modulo 2^32)');
});

test('a header that zlib would refuse fails: magic, method, reserved flags, header CRC-16', async () => {
  assert.match((await faultOf(altered(starts[2]!, () => 0x1e), 2)).reason, /does not start as a gzip member does \(1f 8b\) but with 1e8b/);
  assert.equal((await faultOf(altered(starts[2]! + 2, () => 7), 2)).reason, 'its compression method is 7, not DEFLATE (8)');
  assert.match((await faultOf(altered(starts[2]! + 3, (b) => b | 0x80), 2)).reason, /reserved flags/);
  // A changed byte of the file name: only the header's CRC-16 tells.
  const name = stream.indexOf(Buffer.from('x\0a comment'), starts[2]);
  assert.match((await faultOf(altered(name, () => 0x79), 2)).reason, /^its header's CRC-16 is [0-9a-f]+, the header says [0-9a-f]+$/);
});

test('DEFLATE data that does not inflate fails with zlib\'s reason', async () => {
  // The first block header of member 1: BTYPE 11 is reserved.
  const fault = await faultOf(altered(starts[0]! + 10, (b) => b | 0x06), 0);
  assert.match(fault.reason, /^its compressed data is not valid DEFLATE data \(invalid block type\)$/);
});

test('bytes after the last member that are no member fail as the next member, after every member verified', async () => {
  const fault = await faultOf(Buffer.concat([stream, Buffer.from([0, 0, 0, 0])]), members.length);
  assert.match(fault.reason, /does not start as a gzip member does \(1f 8b\) but with 0000/);
  assert.equal(fault.uncompressedStart, Buffer.concat(parts).length);
  // zlib's gunzip, as Node.js gives it, says nothing of them.
  assert.deepEqual(gunzipSync(Buffer.concat([stream, Buffer.from([0, 0, 0, 0])])), Buffer.concat(parts));
});

test('a gzip file as gzip(1) and zlib write it: one member with its name', async () => {
  const bytes = gzipSync(parts[2]!);
  const result = await check(bytes, 333);
  assert.deepEqual(result.members, [{ start: 0, end: bytes.length, uncompressedStart: 0, uncompressedEnd: parts[2]!.length }]);
  assert.equal(result.fault, undefined);
});
