/**
 * The order-independent half of a table check (./table-hash.ts): each row's
 * encoding hashed on its own with SHA-256, and the digests summed, as eight
 * 32-bit words each modulo 2^32. A sum does not depend on the order rows are
 * added in, so each side reads a table in whatever order it stores it.
 */
import { hash } from 'node:crypto';

export const DIGEST_WORDS = 8;

/** Rows encoded back to back in `chunk`, row i ending at ends[i]; their digests added into `sum`. */
export function addRowDigests(sum: Uint32Array, chunk: Buffer, ends: Uint32Array, rows: number): void {
  let start = 0;
  for (let i = 0; i < rows; i++) {
    const end = ends[i]!;
    const d = hash('sha256', chunk.subarray(start, end), 'buffer');
    for (let w = 0; w < DIGEST_WORDS; w++) sum[w] = (sum[w]! + d.readUInt32BE(4 * w)) >>> 0;
    start = end;
  }
}

/** The sum as 64 hex digits, word by word. */
export function sumHex(sum: Uint32Array): string {
  let s = '';
  for (const w of sum) s += w.toString(16).padStart(8, '0');
  return s;
}
