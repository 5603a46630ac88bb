/**
 * Order numbers (src/store/sqlite/order-numbers.ts): history rows name their
 * order by a number that grows with the time the order first appears, so a
 * prune of the oldest blocks rewrites pages at the low end of the history
 * index by order only. Counted from the WAL: each frame the batch's commit
 * appends names the page it holds, and dbstat says which pages are the
 * index's. With the index keyed by the (random) order id, the same batch
 * rewrote every page of it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { STATUS } from '../../../src/domain/enums.js';
import { writeBlocks } from '../../../src/store/store.js';
import { openDatabase } from '../../../src/store/sqlite/database.js';
import { SqlitePruner } from '../../../src/store/sqlite/pruner.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { block, order, tempDatabase } from '../helpers.js';

/** Ids as the network's: hashes, in no order. */
const id = (n: number) => createHash('sha256').update(`order ${n}`).digest('hex');

const BLOCKS = 400;
const PER_BLOCK = 20;

/** Each block places PER_BLOCK orders and fills those of the block before: two versions each. */
function blocks() {
  return Array.from({ length: BLOCKS }, (_, b) => {
    const placed = Array.from({ length: PER_BLOCK }, (_, i) => order(b * PER_BLOCK + i, { id: id(b * PER_BLOCK + i) }));
    const filled = b === 0 ? [] : Array.from({ length: PER_BLOCK }, (_, i) => {
      const n = (b - 1) * PER_BLOCK + i;
      return order(n, { id: id(n), version: 2n, status: STATUS.FILLED, remaining: 0n });
    });
    return block(b + 1, { orders: [...filled, ...placed] });
  });
}

/** The page number of each frame in a WAL file (its 32-byte header, then frames of a 24-byte header and a page). */
function walPages(path: string): number[] {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const pages: number[] = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) pages.push(wal.readUInt32BE(at));
  return pages;
}

test('pruning the oldest tenth of the blocks (38 of 400) rewrites few pages of the history index by order', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, blocks());
  await writer.close();

  const db = openDatabase({ path });
  t.after(() => db.close());
  const pagesOf = db.prepare('SELECT pageno FROM dbstat WHERE name = ?').pluck();
  const indexPages = new Set((pagesOf.all('orders_history_by_order') as bigint[]).map(Number));
  assert.ok(indexPages.size >= 10, `the index has ${indexPages.size} pages`);
  db.pragma('wal_checkpoint(TRUNCATE)');

  // A window of 361 blocks' time: blocks 1-38 are older than it (block 39 is exactly the window before
  // block 400). Orders placed in 1-37 were filled in 2-38 and are forgotten; those of 38, filled in 39,
  // lose their first version.
  const pruner = new SqlitePruner(db, 361n * 1_000_000_000n);
  const batch = pruner.step(1_000_000);
  const historyRows = PER_BLOCK + 37 * 2 * PER_BLOCK;
  assert.equal(batch.rows, historyRows + 37 * PER_BLOCK, 'the rows of blocks 1-38 and the current state of the orders placed in 1-37');
  const rewritten = new Set(walPages(path).filter((p) => indexPages.has(p)));
  assert.ok(
    rewritten.size <= indexPages.size / 3,
    `${rewritten.size} of the index's ${indexPages.size} pages rewritten for a tenth of its rows`,
  );
  // Everything from block 39 on is kept.
  assert.equal(db.prepare('SELECT count(*) FROM orders_history').pluck().get(), BigInt(BLOCKS * PER_BLOCK * 2 - PER_BLOCK - historyRows));
});
