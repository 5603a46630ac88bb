/**
 * Checks a gzip stream member by member (RFC 1952): each member's header, its
 * DEFLATE data and its trailer (the CRC-32 and length of its data), and says
 * where each member lies and which one fails first, and why.
 *
 * Hand-written around zlib because zlib's gunzip, as Node.js gives it, checks
 * each member at its end but does not say where a member ends: it cannot name
 * the member that failed, nor say how many bytes of the stream were verified
 * before it, and it stops without a word at bytes after a member that do not
 * start another one. Here zlib still does all the decompressing (a raw inflate
 * per member, which stops at the end of the member's DEFLATE data and says how
 * many bytes it consumed) and the checksum (zlib.crc32); only the header and
 * trailer, a few fixed fields, are read by hand.
 */
import { crc32, createInflateRaw, type InflateRaw } from 'node:zlib';

/** A member whose CRC-32 and length matched its data. */
export interface GzipMember {
  /** Compressed byte offsets: its first byte, and just past its trailer. */
  start: number;
  end: number;
  /** Where its data lies in the uncompressed stream. */
  uncompressedStart: number;
  uncompressedEnd: number;
}

/** The first member that is not a whole, verified member. */
export interface GzipFault {
  /** `cut`: the stream ends inside the member; `corrupt`: it is not what it claims. */
  kind: 'cut' | 'corrupt';
  /** Its number, from 1. */
  member: number;
  /** Compressed byte offset where it starts. */
  start: number;
  /** Uncompressed byte offset where its data starts (the end of the verified members'). */
  uncompressedStart: number;
  reason: string;
}

export interface GzipCheck {
  /** The members that verified, in order; none after a fault. */
  members: GzipMember[];
  fault?: GzipFault;
  /** The stream's compressed bytes read (all of them, unless it stopped at a corrupt member). */
  compressedBytes: number;
}

/** The compressed end of the verified members: the bytes that may be read as data. */
export function verifiedEnd(check: GzipCheck): number {
  return check.members.at(-1)?.end ?? 0;
}

const ID1 = 0x1f;
const ID2 = 0x8b;
const DEFLATE = 8;
const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
const RESERVED_FLAGS = 0xe0;
const FIXED_HEADER_BYTES = 10;
const TRAILER_BYTES = 8;
const INFLATE_CHUNK_BYTES = 1 << 16;

type Failure = { kind: 'cut' | 'corrupt'; reason: string };

/**
 * Reads `chunks` (a gzip stream from its first byte) to its end, or to its
 * first member that fails; the chunks are released either way. Never throws
 * for what the bytes hold: that is the fault.
 */
export async function checkGzipMembers(chunks: AsyncIterable<Buffer>): Promise<GzipCheck> {
  const input = chunks[Symbol.asyncIterator]();
  const bytes = new ByteReader(input);
  const members: GzipMember[] = [];
  let uncompressed = 0;
  try {
    for (let member = 1; ; member++) {
      const start = bytes.position;
      if (!(await bytes.more())) return { members, compressedBytes: bytes.position };
      const fault = ({ kind, reason }: Failure): GzipCheck => ({
        members, compressedBytes: bytes.position, fault: { kind, reason, member, start, uncompressedStart: uncompressed },
      });
      const data = (await readHeader(bytes, start)) ?? (await inflateMember(bytes, start));
      if ('reason' in data) return fault(data);
      const { crc, length } = data;
      const trailer = await bytes.take(TRAILER_BYTES);
      if (trailer.length < TRAILER_BYTES) {
        return fault({ kind: 'cut', reason: cutReason(trailer.length === 0 ? 'before its trailer' : 'in its trailer', bytes.position - start) });
      }
      if (trailer.readUInt32LE(0) !== crc) {
        return fault({ kind: 'corrupt', reason: `the CRC-32 of its data is ${hex(crc)}, its trailer says ${hex(trailer.readUInt32LE(0))}` });
      }
      // The trailer holds the length modulo 2^32.
      if (trailer.readUInt32LE(4) !== length % 2 ** 32) {
        return fault({ kind: 'corrupt', reason: `its data is ${length} bytes, its trailer says ${trailer.readUInt32LE(4)} (modulo 2^32)` });
      }
      members.push({ start, end: bytes.position, uncompressedStart: uncompressed, uncompressedEnd: uncompressed + length });
      uncompressed += length;
    }
  } finally {
    await input.return?.();
  }
}

const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

/** Why a member is cut: the stream ends `where`, `into` bytes after the member's first byte. */
function cutReason(where: string, into: number): string {
  return `the stream ends ${where}, ${into} byte${into === 1 ? '' : 's'} into the member, before its CRC-32 and length`;
}

/** The header (RFC 1952, 2.3.1), consumed; a failure if it is not one zlib would take. */
async function readHeader(bytes: ByteReader, start: number): Promise<Failure | undefined> {
  const cut = (where: string): Failure => ({ kind: 'cut', reason: cutReason(`in its header${where}`, bytes.position - start) });
  const fixed = await bytes.take(FIXED_HEADER_BYTES);
  if (fixed[0] !== ID1 || (fixed.length > 1 && fixed[1] !== ID2)) {
    return { kind: 'corrupt', reason: `it does not start as a gzip member does (1f 8b) but with ${fixed.subarray(0, 2).toString('hex')}` };
  }
  if (fixed.length > 2 && fixed[2] !== DEFLATE) return { kind: 'corrupt', reason: `its compression method is ${fixed[2]}, not DEFLATE (8)` };
  const flags = fixed[3] ?? 0;
  if (flags & RESERVED_FLAGS) return { kind: 'corrupt', reason: `its header sets reserved flags (${flags.toString(2).padStart(8, '0')})` };
  if (fixed.length < FIXED_HEADER_BYTES) return cut('');
  const header: Buffer[] = [fixed];
  if (flags & FEXTRA) {
    const size = await bytes.take(2);
    header.push(size);
    if (size.length < 2) return cut(' (its extra field)');
    const extra = await bytes.take(size.readUInt16LE(0));
    header.push(extra);
    if (extra.length < size.readUInt16LE(0)) return cut(' (its extra field)');
  }
  for (const [flag, what] of [[FNAME, 'file name'], [FCOMMENT, 'comment']] as const) {
    if (!(flags & flag)) continue;
    const text = await bytes.takeThrough(0);
    header.push(text);
    if (text.at(-1) !== 0) return cut(` (its ${what})`);
  }
  if (flags & FHCRC) {
    const stored = await bytes.take(2);
    if (stored.length < 2) return cut(' (its CRC-16)');
    const actual = crc32(Buffer.concat(header)) & 0xffff;
    if (stored.readUInt16LE(0) !== actual) {
      return { kind: 'corrupt', reason: `its header's CRC-16 is ${actual.toString(16)}, the header says ${stored.readUInt16LE(0).toString(16)}` };
    }
  }
  return undefined;
}

/**
 * Inflates the member's DEFLATE data, leaving the reader just past it; its
 * CRC-32 and length, or why it cannot be read. A raw inflate stream stops at
 * the end of the DEFLATE data and leaves the rest of its input unconsumed; its
 * bytesWritten counts the input it consumed, so the bytes it did not take go
 * back to the reader, for the trailer.
 */
async function inflateMember(bytes: ByteReader, start: number): Promise<Failure | { crc: number; length: number }> {
  const inflate = createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES });
  let crc = 0;
  let length = 0;
  inflate.on('data', (data: Buffer) => {
    crc = crc32(data, crc);
    length += data.length;
  });
  // 'end' comes after every 'data': the checksum is complete then.
  const outcome = new Promise<Error | undefined>((resolve) => {
    inflate.once('end', () => resolve(undefined));
    inflate.once('error', resolve);
  });
  const corrupt = (e: Error): Failure => ({ kind: 'corrupt', reason: `its compressed data is not valid DEFLATE data (${e.message})` });
  try {
    let fed = 0;
    for (;;) {
      const chunk = await bytes.next();
      if (chunk === undefined) {
        // The stream ended: complete DEFLATE data ends cleanly, else zlib says "unexpected end of file".
        inflate.end();
        const error = await outcome;
        const where = error === undefined ? 'before its trailer' : 'in its compressed data';
        return { kind: 'cut', reason: cutReason(where, bytes.position - start) };
      }
      const error = await Promise.race([written(inflate, chunk), outcome]);
      if (error) return corrupt(error);
      fed += chunk.length;
      const unconsumed = fed - inflate.bytesWritten;
      if (unconsumed > 0) {
        // The DEFLATE data ended inside this chunk (or at the end of the one before).
        bytes.unread(chunk.subarray(chunk.length - unconsumed));
        const failed = await outcome;
        return failed ? corrupt(failed) : { crc, length };
      }
    }
  } finally {
    inflate.destroy();
  }
}

/** Resolves once zlib has taken `chunk` (its output already handed to 'data'), with the error if it failed. */
function written(inflate: InflateRaw, chunk: Buffer): Promise<Error | undefined> {
  return new Promise((resolve) => inflate.write(chunk, (e) => resolve(e ?? undefined)));
}

/** Chunks of a stream, read as exact byte counts; bytes read too far are put back. */
class ByteReader {
  private putBack: Buffer | undefined;
  /** Stream offset of the next byte to be read. */
  position = 0;

  constructor(private readonly input: AsyncIterator<Buffer>) {}

  /** The next bytes: those put back, else the next chunk; undefined at the end. */
  async next(): Promise<Buffer | undefined> {
    let chunk = this.putBack;
    this.putBack = undefined;
    while (chunk === undefined || chunk.length === 0) {
      const r = await this.input.next();
      if (r.done) return undefined;
      chunk = r.value;
    }
    this.position += chunk.length;
    return chunk;
  }

  /** Puts the last bytes read back, to be read again. */
  unread(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.putBack = this.putBack ? Buffer.concat([bytes, this.putBack]) : bytes;
    this.position -= bytes.length;
  }

  /** Whether a byte is left. */
  async more(): Promise<boolean> {
    const chunk = await this.next();
    if (chunk === undefined) return false;
    this.unread(chunk);
    return true;
  }

  /** The next `n` bytes, or fewer if the stream ends first. */
  async take(n: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    let have = 0;
    while (have < n) {
      const chunk = await this.next();
      if (chunk === undefined) break;
      const part = chunk.subarray(0, n - have);
      this.unread(chunk.subarray(part.length));
      parts.push(part);
      have += part.length;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** The bytes up to and including the next `byte`, or all that is left if none comes. */
  async takeThrough(byte: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (;;) {
      const chunk = await this.next();
      if (chunk === undefined) break;
      const at = chunk.indexOf(byte);
      if (at < 0) {
        parts.push(chunk);
        continue;
      }
      parts.push(chunk.subarray(0, at + 1));
      this.unread(chunk.subarray(at + 1));
      break;
    }
    return Buffer.concat(parts);
  }
}
