/**
 * The event file framing of the network's core (big-endian):
 *   uint32 size | uint64 sequence number | BusEvent bytes,  size = 8 + len(bytes)
 */

import { CorruptInputError } from '../errors.js';

export const RECORD_HEADER_BYTES = 12;
/** Largest record we accept; a size beyond it is corruption, not a real event. */
export const MAX_EVENT_BYTES = 64 * 1024 * 1024;

export function encodeRecord(seq: bigint, event: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(RECORD_HEADER_BYTES + event.length);
  out.writeUInt32BE(8 + event.length, 0);
  out.writeBigUInt64BE(seq, 4);
  out.set(event, RECORD_HEADER_BYTES);
  return out;
}

export interface FramedRecord {
  seq: bigint;
  event: Buffer;
  /** Byte offset of the record's header in the stream. */
  offset: number;
}

/**
 * Splits a byte stream into records incrementally: push chunks, take whole
 * records; an incomplete tail stays buffered until more bytes arrive.
 * Hand-written because the framing is the core's own, not a standard one.
 */
export class RecordSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  /** Stream offset of buf[0]. */
  private base = 0;
  /**
   * Chunks pushed since `buf`, kept as they came until the record they
   * continue is whole: a record spanning many chunks (a large one, or a
   * corrupt size's megabytes) is then copied once, not once per chunk
   * (BENCHMARKS.md, "Figures behind the code").
   */
  private later: Buffer[] = [];
  private laterBytes = 0;

  constructor(startOffset = 0) {
    this.base = startOffset;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.later.push(chunk);
    this.laterBytes += chunk.length;
  }

  /** Makes `buf` hold every byte not yet taken, from `pos`. */
  private join(): void {
    const rest = this.buf.subarray(this.pos);
    this.buf = rest.length === 0 && this.later.length === 1 ? this.later[0]! : Buffer.concat([rest, ...this.later]);
    this.base += this.pos;
    this.pos = 0;
    this.later = [];
    this.laterBytes = 0;
  }

  /** The next whole record, or undefined when more bytes are needed. Throws CorruptInputError on an impossible size. */
  next(): FramedRecord | undefined {
    const avail = this.pending;
    if (avail < RECORD_HEADER_BYTES) return undefined;
    if (this.buf.length - this.pos < RECORD_HEADER_BYTES) this.join();
    const size = this.buf.readUInt32BE(this.pos);
    const offset = this.base + this.pos;
    if (size < 8 || size - 8 > MAX_EVENT_BYTES) {
      throw new CorruptInputError(`impossible record size ${size}`, { offset });
    }
    if (avail < 4 + size) return undefined;
    if (this.buf.length - this.pos < 4 + size) this.join();
    const seq = this.buf.readBigUInt64BE(this.pos + 4);
    const event = this.buf.subarray(this.pos + RECORD_HEADER_BYTES, this.pos + 4 + size);
    this.pos += 4 + size;
    return { seq, event, offset };
  }

  /** Stream offset just past the last record returned. */
  get offset(): number {
    return this.base + this.pos;
  }

  /** Bytes buffered that do not yet form a whole record. */
  get pending(): number {
    return this.buf.length - this.pos + this.laterBytes;
  }
}
