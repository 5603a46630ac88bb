/**
 * A table's check: its row count and a SHA-256 of its rows in key order, each
 * value in the neutral form (./neutral.ts) encoded one way whatever backend
 * it came from: equal hashes, equal tables. Values are written into one
 * buffer, hashed a megabyte at a time.
 */
import { createHash, type Hash } from 'node:crypto';
import type { NeutralRow } from './neutral.js';

const CHUNK = 1 << 20;
const INT64_MIN = -(1n << 63n);
const U64_MAX = (1n << 64n) - 1n;

export interface TableCheck {
  rows: number;
  /** Hex. */
  hash: string;
}

export class TableHash {
  private readonly hash: Hash = createHash('sha256');
  private buffer = Buffer.allocUnsafe(CHUNK);
  private view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
  private at = 0;
  private rows = 0;

  /**
   * Tags tell the kinds apart and lengths frame each value: null 0; an
   * integer 1 and 16 bytes (two's complement, big-endian: every u64 and int64
   * fits); text 2, its UTF-8 length (4 bytes) and bytes; bytes 3, length and bytes.
   */
  add(row: NeutralRow): void {
    this.rows++;
    for (const v of row) {
      if (v === null) {
        this.room(1);
        this.buffer[this.at++] = 0;
      } else if (typeof v === 'bigint') {
        this.room(17);
        this.buffer[this.at] = 1;
        if (v >= 0n && v <= U64_MAX) {
          // Nearly every value: no sign word to work out, no wrapped copy to allocate.
          this.view.setBigUint64(this.at + 1, 0n);
          this.view.setBigUint64(this.at + 9, v);
        } else {
          this.view.setBigInt64(this.at + 1, v < 0n && v >= INT64_MIN ? -1n : v >> 64n);
          this.view.setBigUint64(this.at + 9, BigInt.asUintN(64, v));
        }
        this.at += 17;
      } else if (typeof v === 'string') {
        this.room(5 + 3 * v.length);
        this.buffer[this.at] = 2;
        const n = this.buffer.write(v, this.at + 5, 'utf8');
        this.view.setUint32(this.at + 1, n);
        this.at += 5 + n;
      } else {
        this.room(5 + v.byteLength);
        this.buffer[this.at] = 3;
        this.view.setUint32(this.at + 1, v.byteLength);
        this.buffer.set(v, this.at + 5);
        this.at += 5 + v.byteLength;
      }
    }
  }

  finish(): TableCheck {
    this.hash.update(this.buffer.subarray(0, this.at));
    this.at = 0;
    return { rows: this.rows, hash: this.hash.digest('hex') };
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    this.hash.update(this.buffer.subarray(0, this.at));
    this.at = 0;
    if (bytes > this.buffer.length) {
      this.buffer = Buffer.allocUnsafe(bytes);
      this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
    }
  }
}
