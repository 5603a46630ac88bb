/**
 * Reads COPY ... TO STDOUT (FORMAT binary) as it arrives, chunk by chunk:
 * the signature, flags and header extension, then per row a field count and
 * each field as a length (-1: null) and its bytes, then -1. The other half of
 * ./copy-binary.ts.
 */
import { InternalError } from '../../errors.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A field's value from its bytes, `data` from `start` to `end`: read in place, without a view of its own per field. */
export type FieldDecoder<T> = (data: Buffer, start: number, end: number) => T;

const view: FieldDecoder<Buffer> = (data, start, end) => data.subarray(start, end);

export class BinaryCopyReader {
  private pending: Buffer = Buffer.alloc(0);
  private headerRead = false;
  private ended = false;

  constructor(private readonly fields: number) {}

  /** The rows `chunk` completes, each field a view of the bytes (null for NULL). */
  push(chunk: Buffer): (Buffer | null)[][] {
    return this.decode(chunk, Array<FieldDecoder<Buffer>>(this.fields).fill(view));
  }

  /** The rows `chunk` completes, field i as decoders[i] reads it (null for NULL). */
  decode<T>(chunk: Buffer, decoders: readonly FieldDecoder<T>[]): (T | null)[][] {
    const data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    if (!this.headerRead) {
      if (data.length < SIGNATURE.length + 8) {
        this.pending = data;
        return [];
      }
      if (!data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new InternalError('COPY binary output without its signature');
      const extension = data.readInt32BE(SIGNATURE.length + 4);
      if (data.length < SIGNATURE.length + 8 + extension) {
        this.pending = data;
        return [];
      }
      at = SIGNATURE.length + 8 + extension;
      this.headerRead = true;
    }
    const rows: (T | null)[][] = [];
    for (;;) {
      if (data.length - at < 2) break;
      const count = data.readInt16BE(at);
      if (count === -1) {
        this.ended = true;
        at += 2;
        break;
      }
      if (count !== this.fields) throw new InternalError(`COPY binary row of ${count} fields, ${this.fields} expected`);
      let p = at + 2;
      let whole = true;
      for (let i = 0; i < count; i++) {
        if (data.length - p < 4) {
          whole = false;
          break;
        }
        const n = data.readInt32BE(p);
        p += 4;
        if (n === -1) continue;
        if (data.length - p < n) {
          whole = false;
          break;
        }
        p += n;
      }
      if (!whole) break;
      // Decoded once the row is whole: a row cut by the chunk's end is read again with the next.
      const row: (T | null)[] = new Array<T | null>(count);
      let f = at + 2;
      for (let i = 0; i < count; i++) {
        const n = data.readInt32BE(f);
        f += 4;
        if (n === -1) {
          row[i] = null;
        } else {
          row[i] = decoders[i]!(data, f, f + n);
          f += n;
        }
      }
      rows.push(row);
      at = p;
    }
    this.pending = at === data.length ? Buffer.alloc(0) : Buffer.from(data.subarray(at));
    return rows;
  }

  /** Throws unless the stream ended with its trailer. */
  end(): void {
    if (!this.ended) throw new InternalError('COPY binary output ended without its trailer');
  }
}
