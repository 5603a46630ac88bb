import type { StoredBlock } from '../store/store.js';

/**
 * The hashes and digests of stored blocks, for comparing a block a source
 * delivers again. A source replays in height order (a file read again, a core
 * resending), so they are fetched a range at a time: one store round trip per
 * range.
 */
export class StoredBlocks {
  private static readonly RANGE = 1000n;
  private cached = new Map<bigint, StoredBlock>();
  private from = 1n;
  private to = 0n;

  constructor(private readonly fetch: (from: bigint, to: bigint) => Promise<Map<bigint, StoredBlock>>) {}

  /** The stored block `height` (at most `newest`); undefined when the store has no hash for it. */
  async of(height: bigint, newest: bigint): Promise<StoredBlock | undefined> {
    if (height < this.from || height > this.to) {
      this.from = height;
      this.to = height + StoredBlocks.RANGE - 1n < newest ? height + StoredBlocks.RANGE - 1n : newest;
      this.cached = await this.fetch(this.from, this.to);
    }
    return this.cached.get(height);
  }
}

/** Heights in ascending order as ranges: "1..1082, 1090, 1200..1201". */
export function heightRanges(heights: readonly bigint[]): string {
  const sorted = [...new Set(heights)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1n) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}..${sorted[j]}`);
    i = j + 1;
  }
  return ranges.join(', ');
}
