/** Shared setup of the store tests: temporary database files and hand-built blocks. */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyBlock, type Block } from '../../src/domain/block.js';
import { STATUS } from '../../src/domain/enums.js';
import type { Order } from '../../src/domain/order.js';
import { encodeOrder } from '../../src/wire/order-message.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { SqliteWriter } from '../../src/store/sqlite/writer.js';

export const hex = (n: number) => n.toString(16).padStart(64, '0');
export const T0 = 1_700_000_000_000_000_000n;
export const blockTime = (height: bigint) => T0 + height * 1_000_000_000n;

/**
 * A plain live limit order; `over` changes any field. Orders are created a
 * microsecond apart, the resolution answers have, so they do not tie.
 */
export function order(n: number, over: Partial<Order> = {}): Order {
  return {
    id: hex(n), marketId: hex(1000 + (n % 3)), partyId: hex(2000 + (n % 5)), side: 1, price: '100',
    size: 10n, remaining: 10n, timeInForce: 1, type: 1, createdAt: T0 + BigInt(n) * 1000n, status: 1,
    expiresAt: 0n, reference: '', updatedAt: 0n, version: 1n, batchId: 0n,
    liquidityProvisionId: '', postOnly: false, reduceOnly: false, ...over,
  };
}

/** A block; its orders' messages are encoded from its orders unless given. */
export function block(height: number, fill: Partial<Omit<Block, 'height' | 'time'>> = {}): Block {
  const h = BigInt(height);
  const orderMessages = (fill.orders ?? []).map(encodeOrder);
  return { ...emptyBlock(h, blockTime(h), `hash-${height}`, 'test-chain'), orderMessages, ...fill };
}

/** The id of placedThenFilled's order `n`: a hash, as the network's ids are, in no order. */
export const hashedId = (n: number) => createHash('sha256').update(`order ${n}`).digest('hex');

/**
 * Blocks 1..`count` a second apart: each places `perBlock` orders (ids of
 * hashes, as the network's) and fills those of the block before, so that a
 * window of a few blocks forgets the first orders, their numbers with them.
 */
export function placedThenFilled(count: number, perBlock: number): Block[] {
  const id = hashedId;
  return Array.from({ length: count }, (_, b) => {
    const placed = Array.from({ length: perBlock }, (_, i) => order(b * perBlock + i, { id: id(b * perBlock + i) }));
    const filled = b === 0 ? [] : Array.from({ length: perBlock }, (_, i) => {
      const n = (b - 1) * perBlock + i;
      return order(n, { id: id(n), version: 2n, status: STATUS.FILLED, remaining: 0n });
    });
    return block(b + 1, { orders: [...filled, ...placed] });
  });
}

/** The page number of each frame in a database's WAL file (its 32-byte header, then frames of a 24-byte header and a page). */
export function walPages(path: string): number[] {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const pages: number[] = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) pages.push(wal.readUInt32BE(at));
  return pages;
}

/** A folder that disappears after the test, and the database path inside it. */
export function tempDatabase(t: { after(fn: () => void): void }): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lq-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, path: join(dir, 'ledger.db') };
}

/**
 * A store on a fresh temporary file, through both doors: its writer (the
 * writer thread, as ingestion writes) and a query store; closed after the test.
 */
export async function tempStore(t: { after(fn: () => void | Promise<void>): void }): Promise<{ store: SqliteStore; writer: SqliteWriter; path: string }> {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  const store = openSqliteStore({ path, readOnly: true });
  t.after(async () => {
    await writer.close();
    await store.close();
  });
  return { store, writer, path };
}

/** Deterministic pseudo-random numbers (mulberry32), so datasets are the same on every run. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
