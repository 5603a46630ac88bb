/**
 * A map bounded by the bytes of what it holds, least recently used first
 * out: for every map whose keys come from clients (URLs, statement texts,
 * client addresses), so that its memory has a bound whatever they send; a
 * bound by count is none when one key may be 100 KB. Written by hand:
 * lru-cache does the same (maxSize, sizeCalculation) but is not a
 * dependency. A list links the entries in order of use, and a key kept
 * again is updated in place: V8's Map leaves a deleted entry in its table
 * until the table is rebuilt, so that re-inserting a key to mark it used
 * (the usual way to keep a Map in order of use) made one client's
 * requests cost up to 300 us each in a map of 50,000 others.
 */
interface Entry<K, V> {
  key: K;
  value: V;
  bytes: number;
  /** Used just before this one (toward the oldest), and just after. */
  older: Entry<K, V> | undefined;
  newer: Entry<K, V> | undefined;
}

export class BoundedMap<K, V> {
  private readonly entries = new Map<K, Entry<K, V>>();
  private oldest: Entry<K, V> | undefined;
  private newest: Entry<K, V> | undefined;
  private held = 0;

  /** `maxBytes`: the most the entries may add up to. */
  constructor(readonly maxBytes: number) {}

  /** The value kept under `key`, marked as just used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry !== this.newest) {
      this.unlink(entry);
      this.append(entry);
    }
    return entry.value;
  }

  /** Keeps `value` as `bytes` bytes (with its key); one larger than the whole bound is not kept. */
  set(key: K, value: V, bytes: number): void {
    if (bytes > this.maxBytes) return this.delete(key);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { key, value, bytes, older: undefined, newer: undefined };
      this.entries.set(key, entry);
    } else {
      // Updated where it is: deleting and adding a key again leaves the Map's chain for that key a step longer each time.
      this.unlink(entry);
      this.held -= entry.bytes;
      entry.value = value;
      entry.bytes = bytes;
    }
    this.append(entry);
    this.held += bytes;
    while (this.held > this.maxBytes && this.oldest !== undefined) this.delete(this.oldest.key);
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.unlink(entry);
    this.held -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.oldest = this.newest = undefined;
    this.held = 0;
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.held };
  }

  private append(entry: Entry<K, V>): void {
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest !== undefined) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry<K, V>): void {
    if (entry.older !== undefined) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer !== undefined) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = undefined;
  }
}

/** Bytes a string takes in V8, near enough: one per character for the ASCII of URLs and SQL, two for others. */
export function stringBytes(s: string): number {
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\xff]*$/.test(s) ? s.length : 2 * s.length;
}
