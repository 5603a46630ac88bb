/**
 * Answers kept in memory for as long as they cannot have changed: until the
 * next block is committed. Bots and dashboards poll the same first pages many
 * times per block; each is computed once per block and served from here after.
 * Every entry belongs to the block it was read at; when the store's last block
 * is another, all of them are dropped at once. Bounded in bytes, least
 * recently used first out. Written by hand: an LRU by bytes whose entries grow
 * (a compressed variant is added when first asked for) and that empties on a
 * block change is a few lines here, and none of the cache packages does both.
 */
import type { BlockStamp } from '../domain/page.js';

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
}

/** Bytes an entry holds beyond its bodies: key, maps, headers. */
const ENTRY_OVERHEAD = 256;

export class AnswerCache {
  private readonly entries = new Map<string, { answer: CachedAnswer; bytes: number }>();
  private block: string | undefined;
  private bytes = 0;
  /** Lookups that found an answer, and that did not (for the metrics). */
  readonly stats = { hits: 0, misses: 0 };

  constructor(readonly maxBytes: number) {}

  /** The answer to `key` read at `block` (the store's last block now), if kept. */
  get(key: string, block: string): CachedAnswer | undefined {
    this.moveTo(block);
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    // Re-inserted to mark it recently used: a Map iterates in insertion order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.answer;
  }

  /** Keeps an answer, if it was read at the block the cache is at (a newer one is not kept either). */
  set(key: string, answer: CachedAnswer): void {
    if (answer.block !== this.block) return;
    const bytes = ENTRY_OVERHEAD + key.length + answer.identity.byteLength;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.bytes -= old.bytes;
      this.entries.delete(key);
    }
    this.entries.set(key, { answer, bytes });
    this.bytes += bytes;
    this.evict();
  }

  /** Adds a compressed body to a kept answer. */
  addEncoding(key: string, answer: CachedAnswer, coding: string, body: Buffer): void {
    answer.encoded.set(coding, body);
    const entry = this.entries.get(key);
    if (entry?.answer !== answer) return;
    entry.bytes += body.length;
    this.bytes += body.length;
    this.evict();
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private moveTo(block: string): void {
    if (block === this.block) return;
    this.block = block;
    this.entries.clear();
    this.bytes = 0;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }
}
