/**
 * Order history on every backend: one row per (order, version, block), the
 * last update of each, in the order of each key's last update in its block
 * (the original's batcher, an ordered map whose re-set moves a key to the
 * back); and the migration from the previous schema (embedded 6 -> 7,
 * PostgreSQL 3 -> 4): a store that version wrote, once migrated, holds what
 * a fresh ingest of the same blocks holds, less what that version never kept.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import { NETWORK_PARTY, type Order } from '../../src/domain/order.js';
import Database from 'better-sqlite3';
import { databasePath } from '../../src/store/location.js';
import { openWriter } from '../../src/store/open.js';
import { writeBlocks } from '../../src/store/store.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { query } from '../support/postgres.js';
import { HISTORY_SQL, restoredMessage, type StoredHistoryRow } from '../support/history.js';
import { removedAsWritten, toPreviousSchema } from '../support/previous-schema.js';
import { block, blockTime, hex, order, random } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-history-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

/** A history row as text the same from either backend: height, seq, order id, version, the message it stands for. */
interface Row { height: bigint; seq: number; id: string; version: bigint; message: string }

async function historyRows(store: FreshStore): Promise<Row[]> {
  const rows = (await store.select(`${HISTORY_SQL} ORDER BY h.height, h.seq`)) as unknown as StoredHistoryRow[];
  return rows.map((r) => ({
    height: BigInt(r.height), seq: Number(r.seq), id: r.id_bytes.toString('hex'), version: BigInt(r.version),
    message: restoredMessage(r).toString('hex'),
  }));
}

/**
 * The rows the original keeps for `blocks`, worked out here from its rule:
 * per block, an ordered map by (order, version) where setting a key again
 * moves it to the back; each key's row is its last update.
 */
function expectedRows(blocks: readonly Block[]): Row[] {
  return blocks.flatMap((b) => {
    const last = new Map<string, number>();
    b.orders.forEach((o, i) => {
      const key = `${o.id}/${o.version}`;
      last.delete(key);
      last.set(key, i);
    });
    return [...last.values()].map((i, seq) => ({
      height: b.height, seq, id: b.orders[i]!.id, version: b.orders[i]!.version,
      message: Buffer.from(b.orderMessages[i]!).toString('hex'),
    }));
  });
}

/**
 * What the previous schema kept of `rows` and the migration makes of it: one
 * row per order and block time (the last of the order's rows of that time),
 * at the highest height of that time, numbered by order id in its block.
 */
function keptByPreviousSchema(rows: readonly Row[], blocks: readonly Block[]): Row[] {
  const timeOf = new Map(blocks.map((b) => [b.height, b.time]));
  const heightOfTime = new Map<bigint, bigint>();
  for (const b of blocks) if ((heightOfTime.get(b.time) ?? -1n) < b.height) heightOfTime.set(b.time, b.height);
  const kept = new Map<string, Row>();
  for (const r of rows) {
    const height = heightOfTime.get(timeOf.get(r.height)!)!;
    kept.set(`${height} ${r.id}`, { ...r, height });
  }
  const byBlock = new Map<bigint, Row[]>();
  for (const r of kept.values()) byBlock.set(r.height, [...(byBlock.get(r.height) ?? []), r]);
  return [...byBlock.keys()].sort((a, b) => (a < b ? -1 : 1)).flatMap((h) =>
    byBlock.get(h)!.sort((a, b) => (a.id < b.id ? -1 : 1)).map((r, seq) => ({ ...r, seq })));
}

/**
 * 40 blocks of random updates to 15 orders (a third of them amend, raising
 * the version, some updates repeat a version), one of the network party
 * (its message kept whole); block 30 has block 29's time; signers removed
 * with addresses in mixed case and timestamps off the microsecond.
 */
function historyBlocks(): Block[] {
  const rng = random(22);
  const state = new Map<number, Order>();
  const blocks: Block[] = [];
  for (let h = 1; h <= 40; h++) {
    const orders: Order[] = [];
    const updates = 1 + Math.floor(rng() * 12);
    for (let u = 0; u < updates; u++) {
      const n = 1 + Math.floor(rng() * 15);
      const before = state.get(n);
      const updatedAt = blockTime(BigInt(h)) + BigInt(u);
      const next: Order = before === undefined
        ? order(n, n === 7 ? { partyId: NETWORK_PARTY } : {})
        : rng() < 0.35
          ? { ...before, version: before.version + 1n, price: String(100 + h + u), updatedAt }
          : { ...before, remaining: before.remaining > 1n ? before.remaining - 1n : before.remaining, updatedAt };
      state.set(n, next);
      orders.push(next);
    }
    const fill: Partial<Block> = { orders };
    if (h === 5 || h === 33) {
      fill.signersRemoved = [{
        signatureSubmitters: [
          { signatureId: `AB${h}`.padEnd(64, 'C'), submitter: '0xAbCd01' },
          { signatureId: `CD${h}`.padEnd(64, 'E'), submitter: '0XEF02aa' },
        ],
        validatorId: 'Ab'.repeat(32), timestamp: blockTime(BigInt(h)) + 123_456_789n, oldSigner: '0xDeAd', nonce: String(h), epochSeq: 3n,
      }];
      fill.nodeSignatures = [{ id: `AB${h}`.padEnd(64, 'C'), sig: Uint8Array.of(h, 1), kind: 2 }];
    }
    if (h === 6) {
      fill.signersAdded = [{
        signatureId: 'F'.repeat(64), validatorId: 'Ab'.repeat(32), timestamp: blockTime(6n) + 5n, newSigner: '0xBeeF', submitter: '0xC0De', nonce: '1', epochSeq: 3n,
      }];
    }
    const b = block(h, fill);
    blocks.push(h === 30 ? { ...b, time: blockTime(29n) } : b);
  }
  return blocks;
}

async function written(store: FreshStore, groups: readonly Block[][]): Promise<void> {
  const writer = await openWriter(store.config);
  try {
    for (const g of groups) await writeBlocks(writer, g);
  } finally {
    await writer.close();
  }
}

/** Runs a statement that writes, on the store's database. */
async function execute(store: FreshStore, sql: string): Promise<void> {
  if (store.config.databaseUrl !== undefined) {
    await query(store.config.databaseUrl, sql);
    return;
  }
  const db = new Database(databasePath(store.config.dataDir));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** Every table but history, rows as sorted text: equal text, equal tables. */
async function otherTables(store: FreshStore): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const text = (v: unknown) => (v instanceof Uint8Array ? `x${Buffer.from(v).toString('hex')}` : String(v));
  for (const table of ['blocks', 'last_block', 'orders_current', 'order_counts', 'signer_added', 'signer_removed', 'node_signatures', 'parties', 'markets']) {
    const rows = await store.select(`SELECT * FROM ${table}`);
    // PostgreSQL's last change is what a store of the previous schema never kept: compared apart.
    const compared = (r: Record<string, unknown>) => Object.keys(r).filter((k) => k !== 'last_height').sort();
    out[table] = rows.map((r) => compared(r).map((k) => `${k}=${text(r[k])}`).join(' ')).sort();
  }
  return out;
}

const newStore = async (backend: (typeof BACKENDS)[number], label: string) => {
  const store = await backend.fresh(dir, `${label}-${stores.length}`);
  stores.push(store);
  return store;
};

for (const backend of BACKENDS) {
  test(`${backend.name}: one row per order, version and block, its last update, in the order of each one's last update`, async () => {
    const store = await newStore(backend, 'order');
    const events = [
      order(1), order(2), order(1, { remaining: 8n }), order(1, { remaining: 8n, price: '101', version: 2n }),
      order(1, { remaining: 8n, price: '102', version: 3n }), order(2, { remaining: 5n }),
      order(1, { remaining: 0n, price: '102', version: 3n, status: 5 }),
    ];
    const b1 = block(1, { orders: events });
    await written(store, [[b1], [block(2, { orders: [order(2, { status: 6 })] })]]);
    const rows = await historyRows(store);
    // Version 1 of order 1 was set again after order 2's first update: it moved to the back, before order 2's key moved.
    assert.deepEqual(rows.map((r) => [r.height, r.seq, r.id, r.version]), [
      [1n, 0, hex(1), 1n], [1n, 1, hex(1), 2n], [1n, 2, hex(2), 1n], [1n, 3, hex(1), 3n], [2n, 0, hex(2), 1n],
    ]);
    assert.deepEqual(rows.slice(0, 4).map((r) => r.message), [2, 3, 5, 6].map((i) => Buffer.from(b1.orderMessages[i]!).toString('hex')),
      'each row holds the message of its last update');
  });

  test(`${backend.name}: random blocks in groups of every size keep the rows the original's rule gives`, async () => {
    const store = await newStore(backend, 'random');
    const blocks = historyBlocks();
    await written(store, [blocks.slice(0, 1), blocks.slice(1, 13), blocks.slice(13, 14), blocks.slice(14)]);
    const rows = await historyRows(store);
    const expected = expectedRows(blocks);
    // The data means something only if it has orders in several versions within one block.
    assert.ok(expected.length < blocks.reduce((n, b) => n + b.orders.length, 0), 'some updates are folded');
    assert.ok(expected.some((r, i) => expected.some((s, j) => j !== i && s.height === r.height && s.id === r.id)), 'an order in two versions in one block');
    assert.deepEqual(rows, expected);
  });

  test(`${backend.name}: a store of the previous schema, migrated, holds what a fresh ingest holds, less what it never kept`, async () => {
    const blocks = historyBlocks();
    const fresh = await newStore(backend, 'fresh');
    await written(fresh, [blocks.slice(0, 20), blocks.slice(20)]);
    const previous = await newStore(backend, 'previous');
    await written(previous, [blocks.slice(0, 20), blocks.slice(20)]);
    await toPreviousSchema(previous.config, removedAsWritten(blocks));
    const before = await otherTables(previous);
    assert.ok(before.signer_removed!.some((r) => r.includes('submitter=0xAbCd01')), 'the rows are as the previous version wrote them');

    // Opening it for writing migrates it; then it takes blocks as a fresh store does.
    const next = block(41, { orders: [order(3, { version: 9n }), order(16), order(3, { version: 10n }), order(3, { version: 9n, status: 6 })] });
    await written(previous, [[next]]);
    await written(fresh, [[next]]);

    assert.deepEqual(await otherTables(previous), await otherTables(fresh), 'current orders, bundles, signatures and blocks');
    if (previous.config.databaseUrl !== undefined) {
      // Orders stored before PostgreSQL's migration 7 have no last change until they change again.
      const lastChanges = await previous.select("SELECT encode(id_bytes, 'hex') AS id, last_height::text AS last FROM orders_current WHERE last_height IS NOT NULL ORDER BY id");
      assert.deepEqual(lastChanges, [order(3), order(16)].map((o) => ({ id: o.id, last: '41' })).sort((a, b) => a.id.localeCompare(b.id)));
    }
    const removed = (await previous.select('SELECT signature_id, submitter, old_signer, timestamp FROM signer_removed ORDER BY signature_id'))
      .map((r) => [r.signature_id, r.submitter, r.old_signer, String(r.timestamp)]);
    assert.deepEqual(removed, [5, 33].flatMap((h) => [
      [`ab${h}`.padEnd(64, 'c'), '0xabcd01', '0xdead', String(blockTime(BigInt(h)) + 123_456_000n)],
      [`cd${h}`.padEnd(64, 'e'), '0xef02aa', '0xdead', String(blockTime(BigInt(h)) + 123_456_000n)],
    ]).sort(([a], [b]) => (a! < b! ? -1 : 1)), 'signer_removed as the original prints it');

    const freshRows = await historyRows(fresh);
    assert.deepEqual(freshRows, expectedRows([...blocks, next]));
    const migrated = await historyRows(previous);
    const stored = keptByPreviousSchema(expectedRows(blocks), blocks);
    assert.ok(stored.length < expectedRows(blocks).length, 'the previous schema kept less');
    assert.ok(!stored.some((r) => r.height === 29n), 'block 29 shares its time with block 30: its rows are at 30');
    assert.deepEqual(migrated, [...stored, ...freshRows.filter((r) => r.height === 41n)]);
  });

  test(`${backend.name}: migrated rows with no block of their time take height 0, in (time, id) order, the last of each version`, async () => {
    const store = await newStore(backend, 'blockless');
    const blocks = [
      block(1, { orders: [order(2), order(1)] }),
      block(2, { orders: [order(3), order(1, { remaining: 5n })] }),
      block(3, { orders: [order(1, { remaining: 5n, version: 2n })] }),
    ];
    await written(store, [blocks]);
    await toPreviousSchema(store.config, []);
    // As a store holds rows written before it kept blocks (the embedded store's schema 3 and older).
    await execute(store, 'DELETE FROM blocks WHERE height < 3');
    await written(store, []);
    const message = (b: number, i: number) => Buffer.from(blocks[b]!.orderMessages[i]!).toString('hex');
    assert.deepEqual(await historyRows(store), [
      { height: 0n, seq: 0, id: hex(2), version: 1n, message: message(0, 0) },
      // Order 1's state of block 1 is gone: block 2 holds the same version's later state.
      { height: 0n, seq: 1, id: hex(1), version: 1n, message: message(1, 1) },
      { height: 0n, seq: 2, id: hex(3), version: 1n, message: message(1, 0) },
      { height: 3n, seq: 0, id: hex(1), version: 2n, message: message(2, 0) },
    ]);
  });
}
