/**
 * A table check's hash (./table-hash.ts) of rows encoded back to back: in
 * key order, one SHA-256 over them all, as they come; in any order, each
 * row hashed with SHA-256 on its own and the digests summed, as eight 32-bit
 * words each modulo 2^32, a sum that does not depend on the order rows are
 * added in. A hash per row costs a call per row, about three times what
 * streaming the same bytes costs (BENCHMARKS.md, "Copying a store"): tables
 * read in key order anyway are streamed.
 */
import { createHash, hash, type Hash } from 'node:crypto';

const DIGEST_WORDS = 8;

export class RowsHash {
  private readonly stream: Hash | undefined;
  private readonly sum = new Uint32Array(DIGEST_WORDS);
  rows = 0;

  constructor(readonly ordered: boolean) {
    this.stream = ordered ? createHash('sha256') : undefined;
  }

  /** Rows encoded back to back in `chunk`, row i ending at ends[i]. */
  add(chunk: Buffer, ends: Uint32Array, rows: number): void {
    this.rows += rows;
    if (this.stream !== undefined) return void this.stream.update(chunk.subarray(0, rows === 0 ? 0 : ends[rows - 1]));
    let start = 0;
    for (let i = 0; i < rows; i++) {
      const end = ends[i]!;
      const d = hash('sha256', chunk.subarray(start, end), 'buffer');
      for (let w = 0; w < DIGEST_WORDS; w++) this.sum[w] = (this.sum[w]! + d.readUInt32BE(4 * w)) >>> 0;
      start = end;
    }
  }

  /** Hex: the stream's digest, or the sum word by word. */
  finish(): string {
    if (this.stream !== undefined) return this.stream.digest('hex');
    let s = '';
    for (const w of this.sum) s += w.toString(16).padStart(8, '0');
    return s;
  }
}
