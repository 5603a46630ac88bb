/**
 * Answers kept in memory for as long as they cannot have changed: until the
 * next block is committed. Bots and dashboards poll the same first pages many
 * times per block; each is computed once per block and served from here after.
 * Every entry belongs to the block it was read at; when the store's last block
 * is another, all of them are dropped at once. Bounded in bytes, least
 * recently used first out (../bounded-map.ts), emptied here on a block change.
 */
import { BoundedMap } from '../bounded-map.js';
import type { BlockStamp } from '../domain/page.js';
import type { HeaderList } from './answer-headers.js';

export interface CachedAnswer {
  /** blockToken() (../domain/page.ts) of the block it was read at. */
  readonly block: string;
  readonly lastBlock: BlockStamp | undefined;
  /** The identity body, as sent. */
  readonly identity: Buffer;
  /** A strong validator of the body: equal bodies, equal tags, whatever the block. */
  readonly etag: string;
  /** Compressed bodies by content coding, added as clients ask for them. */
  readonly encoded: Map<string, Buffer>;
  /** Its heads as the fast path sends them, by delivery (./answer-headers.ts), made when first sent. */
  readonly heads: Map<string, HeaderList>;
}

/** Bytes an entry holds beyond its bodies: key, maps, headers. */
const ENTRY_OVERHEAD = 256;

export class AnswerCache {
  /** In order of use, updated in place (../bounded-map.ts): a hit moves no key in and out of a Map. */
  private readonly entries: BoundedMap<string, { answer: CachedAnswer; bytes: number }>;
  private block: string | undefined;
  /** Lookups that found an answer, and that did not (for the metrics). */
  readonly stats = { hits: 0, misses: 0 };

  constructor(readonly maxBytes: number) {
    this.entries = new BoundedMap(maxBytes);
  }

  /** The answer to `key` read at `block` (the store's last block now), if kept. */
  get(key: string, block: string): CachedAnswer | undefined {
    if (block !== this.block) this.moveTo(block);
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    return entry.answer;
  }

  /** Keeps an answer, if it was read at the block the cache is at (a newer one is not kept either). */
  set(key: string, answer: CachedAnswer): void {
    if (answer.block !== this.block) return;
    const entry = { answer, bytes: ENTRY_OVERHEAD + key.length + answer.identity.byteLength };
    this.entries.set(key, entry, entry.bytes);
  }

  /** Adds a compressed body to a kept answer. */
  addEncoding(key: string, answer: CachedAnswer, coding: string, body: Buffer): void {
    answer.encoded.set(coding, body);
    const entry = this.entries.get(key);
    if (entry?.answer !== answer) return;
    entry.bytes += body.length;
    this.entries.set(key, entry, entry.bytes);
  }

  get size(): { entries: number; bytes: number } {
    return this.entries.size;
  }

  private moveTo(block: string): void {
    this.block = block;
    this.entries.clear();
  }
}
