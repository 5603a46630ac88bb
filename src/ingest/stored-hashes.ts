/**
 * The hashes of stored blocks, for comparing a block a source delivers again.
 * A source replays in height order (a file read again, a core resending), so
 * hashes are fetched a range at a time: one store round trip per range.
 */
export class StoredHashes {
  private static readonly RANGE = 1000n;
  private cached = new Map<bigint, string>();
  private from = 1n;
  private to = 0n;

  constructor(private readonly fetch: (from: bigint, to: bigint) => Promise<Map<bigint, string>>) {}

  /** The hash of the stored block `height` (at most `newest`); undefined when the store has none for it. */
  async of(height: bigint, newest: bigint): Promise<string | undefined> {
    if (height < this.from || height > this.to) {
      this.from = height;
      this.to = height + StoredHashes.RANGE - 1n < newest ? height + StoredHashes.RANGE - 1n : newest;
      this.cached = await this.fetch(this.from, this.to);
    }
    return this.cached.get(height);
  }
}
