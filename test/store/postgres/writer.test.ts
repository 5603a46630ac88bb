/**
 * The PostgreSQL writer: the same blocks in the same groups leave the same
 * rows as the embedded store's writer; groups are written in call order, a
 * failing group takes the groups queued behind it down with it, a block not
 * newer than the stored one is refused, and a group with its checkpoint
 * commits whole or not at all.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Block } from '../../../src/domain/block.js';
import { blockDigest } from '../../../src/domain/block-digest.js';
import { writeEventFile } from '../../../src/simulate/write.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { CURRENT_FIELDS } from '../../../src/store/rows.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { decodeOrder } from '../../../src/wire/order-message.js';
import { readBlocks } from '../../support/blocks.js';
import { createTestDatabase, forEachServer, query, type TestDatabase, type TestServer } from '../../support/postgres.js';
import { block, blockTime, order } from '../helpers.js';
import { HISTORY_SQL, restoredMessage, type StoredHistoryRow } from '../../support/history.js';

const databases: TestDatabase[] = [];
after(() => Promise.all(databases.map((d) => d.drop())));

async function database(server: TestServer): Promise<TestDatabase> {
  const db = await createTestDatabase(server);
  databases.push(db);
  return db;
}

/** A writer on a fresh database, closed after the test. */
async function freshWriter(server: TestServer, t: { after(fn: () => Promise<void>): void }): Promise<{ writer: PostgresWriter; url: string }> {
  const { url } = await database(server);
  const writer = await PostgresWriter.open(url, {});
  t.after(() => writer.close());
  return { writer, url };
}


/** Tables as both backends hold them, with the interned numbers replaced by the ids they stand for. */
const SNAPSHOT_QUERIES: Record<string, string> = {
  current: `SELECT m.id AS market, p.id AS party, ${CURRENT_FIELDS.filter((c) => c !== 'market_no' && c !== 'party_no').map((c) => `o.${c}`).join(', ')}
    FROM orders_current o JOIN markets m ON m.no = o.market_no JOIN parties p ON p.no = o.party_no`,
  history: HISTORY_SQL,
  counts: 'SELECT dimension, value, n FROM order_counts',
  added: 'SELECT * FROM signer_added',
  removed: 'SELECT * FROM signer_removed',
  signatures: 'SELECT resource_id, sig, kind, vega_time FROM node_signatures',
  blocks: 'SELECT height, hash, time FROM blocks',
  last: 'SELECT height, time, chain_id, hash FROM last_block',
};

type Snapshot = Record<string, string[]>;

/** A value as text whatever the backend's type for it: numbers in decimal, bytes in hex. */
function normal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
  return String(v);
}

/** Rows as sorted lines of `column=value`, so neither backend's order nor types matter. */
function lines(rows: Record<string, unknown>[]): string[] {
  return rows.map((r) => Object.keys(r).sort().map((k) => `${k}=${normal(r[k])}`).join(' ')).sort();
}

async function postgresSnapshot(url: string): Promise<Snapshot> {
  const out: Snapshot = {};
  for (const [name, sql] of Object.entries(SNAPSHOT_QUERIES)) out[name] = lines(await query(url, sql));
  return out;
}

function sqliteSnapshot(path: string): Snapshot {
  const db = new Database(path, { readonly: true });
  try {
    const out: Snapshot = {};
    for (const [name, sql] of Object.entries(SNAPSHOT_QUERIES)) {
      out[name] = lines(db.prepare(sql).safeIntegers(true).all() as Record<string, unknown>[]);
    }
    return out;
  } finally {
    db.close();
  }
}

/** Writes `groups` with each backend's writer, group by group, and returns both backends' tables. */
async function bothBackends(server: TestServer, groups: readonly Block[][]): Promise<{ postgres: Snapshot; embedded: Snapshot; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'lq-pgw-'));
  try {
    const path = join(dir, 'ledger.db');
    const sqlite = await SqliteWriter.open(path);
    for (const g of groups) await writeBlocks(sqlite, g);
    await sqlite.close();
    const { url } = await database(server);
    const writer = await PostgresWriter.open(url, {});
    // Handed over without waiting, as ingestion does: overlapping calls.
    await Promise.all(groups.map((g) => writeBlocks(writer, g)));
    await writer.close();
    return { postgres: await postgresSnapshot(url), embedded: sqliteSnapshot(path), url };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Cuts blocks into groups of the given sizes, in turn. */
function grouped(blocks: readonly Block[], sizes: readonly number[]): Block[][] {
  const groups: Block[][] = [];
  for (let i = 0, g = 0; i < blocks.length; g++) {
    const n = sizes[g % sizes.length]!;
    groups.push(blocks.slice(i, i + n));
    i += n;
  }
  return groups;
}

function assertSameTables(postgres: Snapshot, embedded: Snapshot): void {
  for (const name of Object.keys(SNAPSHOT_QUERIES)) {
    assert.deepEqual(postgres[name], embedded[name], `table ${name} differs`);
  }
}

forEachServer((server) => {
  test('a simulated network written in groups leaves the same rows as the embedded store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lq-pgw-sim-'));
    let blocks: Block[];
    try {
      const file = join(dir, 'net.events');
      await writeEventFile(file, { seed: 11, blocks: 400, ordersPerBlock: 20 });
      blocks = await readBlocks(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const { postgres, embedded } = await bothBackends(server, grouped(blocks, [1, 37, 5, 120, 2, 60]));
    // The comparison means something only if the data exercises it.
    assert.ok(postgres.current!.length > 1000, `${postgres.current!.length} orders`);
    assert.ok(postgres.history!.length > postgres.current!.length);
    assert.ok(postgres.added!.length > 0 && postgres.signatures!.length > 0, 'bundles and signatures');
    assert.ok(postgres.counts!.some((l) => l.startsWith('dimension=live')));
    assertSameTables(postgres, embedded);
  });

  test('edge cases: escaped text, u64 beyond int64, repeated block times, orders changed across groups, repeated bundles', async () => {
    const U64_MAX = (1n << 64n) - 1n;
    const odd = { reference: 'tab\there\nnew line\\back\rslash é€😀', size: U64_MAX, version: U64_MAX };
    const strange = order(1, { ...odd, remaining: U64_MAX });
    const pegged = order(2, { peggedOrder: { reference: 1, offset: '-15' }, icebergOrder: { peakSize: 5n, minimumVisibleSize: 2n, reservedRemaining: 3n } });
    const sig = (id: string, byte: number, kind = 1) => ({ id, sig: Uint8Array.of(byte, 0, 255), kind });
    const added = (signatureId: string, nonce: string) => ({
      signatureId, validatorId: 'AB'.repeat(32), timestamp: 1_700_000_000_123_456_789n, newSigner: '0xAbC', submitter: '0xDeF', nonce, epochSeq: 4n,
    });
    const b1 = block(1, { orders: [strange, pegged, order(3)], nodeSignatures: [sig('r1', 1), sig('r1', 1, 2)], signersAdded: [added('S1', '1')] });
    // An order twice in one block: its last state counts; order 6 in two versions keeps one row each, moved to the back by each update.
    const b2 = block(2, {
      orders: [
        order(6), order(3, { status: 2 }), order(6, { version: 2n, price: '101' }), order(3, { status: 3, remaining: 0n }), order(4),
        order(6, { version: 2n, price: '101', remaining: 3n }),
      ],
    });
    // Two blocks of one group with the same time: each keeps its own rows, by height.
    const b3 = { ...block(3, { orders: [order(4, { status: 5 }), order(5)] }), time: blockTime(4n) };
    const b4 = block(4, { orders: [order(4, { status: 6, price: '7' })], signersAdded: [added('S1', '2'), added('S2', '3')] });
    // The next group starts at the time of the stored last block: its rows go beside the stored ones.
    const b5 = { ...block(5, { orders: [order(5, { status: 2 }), order(1, { ...odd, remaining: 0n, status: 3 })] }), time: blockTime(4n) };
    const b6 = block(6, {
      orders: [order(2, { status: 1, reference: 'changed' })], nodeSignatures: [sig('r1', 1, 3), sig('r2', 9)],
      signersRemoved: [{
        signatureSubmitters: [{ signatureId: 'R1', submitter: '0xaa' }, { signatureId: 'R2', submitter: '0xbb' }],
        validatorId: 'CD'.repeat(32), timestamp: 5n, oldSigner: '0xold', nonce: '9', epochSeq: U64_MAX,
      }],
    });
    const { postgres, embedded, url } = await bothBackends(server, [[b1, b2], [b3, b4], [b5], [b6]]);
    assertSameTables(postgres, embedded);
    assert.ok(postgres.current!.some((l) => l.includes(`size=${U64_MAX}`)), 'the u64 is stored whole');
    assert.ok(postgres.current!.some((l) => l.includes('reference=tab\there\nnew line\\back\rslash é€😀')), 'the reference is stored as it was');
    /** An order's rows as [height, seq, version, status]. */
    const historyOf = async (n: number) => {
      const rows = await query<StoredHistoryRow>(url, `${HISTORY_SQL} WHERE h.id_bytes = $1 ORDER BY h.height, h.seq`, [Buffer.from(order(n).id, 'hex')]);
      return rows.map((r) => {
        const o = decodeOrder(restoredMessage(r));
        assert.equal(r.version, String(o.version));
        return [r.height, r.seq, r.version, o.status];
      });
    };
    assert.deepEqual(await historyOf(4), [['2', 2, '1', 1], ['3', 0, '1', 5], ['4', 0, '1', 6]], 'blocks of one time each keep their row');
    assert.deepEqual(await historyOf(5), [['3', 1, '1', 1], ['5', 0, '1', 2]], 'and so do groups');
    assert.deepEqual(await historyOf(6), [['2', 0, '1', 1], ['2', 3, '2', 1]], 'one row per version, at its last update');
    assert.deepEqual(await historyOf(3), [['1', 2, '1', 1], ['2', 1, '1', 3]]);
  });

  test('overlapping writes are written in call order, each group in its own transaction', async (t) => {
    const { writer, url } = await freshWriter(server, t);
    const blocks = [1, 2, 3, 4, 5].map((h) => block(h, { orders: [order(h)] }));
    const writes = blocks.map((b) => writeBlocks(writer, [b]));
    await Promise.all(writes);
    assert.equal((await writer.lastBlock())?.height, 5n);
    const rows = await query<{ height: string; hash: string }>(url, 'SELECT height, hash FROM blocks ORDER BY height');
    assert.deepEqual(rows.map((r) => `${r.height} ${r.hash}`), ['1 hash-1', '2 hash-2', '3 hash-3', '4 hash-4', '5 hash-5']);
    assert.deepEqual(await writer.storedBlocks(2n, 4n), new Map([2, 3, 4].map((h) => [BigInt(h), { hash: `hash-${h}`, digest: blockDigest(blocks[h - 1]!) }])));
  });

  test('a block not newer than the stored last block is refused, and nothing of its group is written', async (t) => {
    const { writer, url } = await freshWriter(server, t);
    await writeBlocks(writer, [block(1, { orders: [order(1)] }), block(2, { orders: [order(2)] })]);
    await assert.rejects(writeBlocks(writer, [block(2, { orders: [order(3)] })]), /block 2 is not newer than the last stored block 2/);
    await assert.rejects(writeBlocks(writer, [block(3, { orders: [order(4)] }), block(1, { orders: [order(5)] })]), /block 1 is not newer than the last stored block 3/);
    const ids = await query<{ id: string }>(url, `SELECT encode(id_bytes, 'hex') AS id FROM orders_current ORDER BY 1`);
    assert.deepEqual(ids.map((r) => r.id), [order(1).id, order(2).id]);
    assert.deepEqual((await query(url, 'SELECT height FROM blocks ORDER BY height')).map((r) => String(r.height)), ['1', '2']);
    // A refusal reported, the writer goes on.
    await writeBlocks(writer, [block(3, { orders: [order(6)] })]);
    assert.equal((await writer.lastBlock())?.height, 3n);
  });

  test('a group failing inside its transaction fails the groups handed over behind it, and none is written', async (t) => {
    const { writer, url } = await freshWriter(server, t);
    await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
    // PostgreSQL text cannot hold NUL: the COPY fails on the server, halfway through the group's statements.
    const failing = writeBlocks(writer, [block(2, { orders: [order(2), order(3, { reference: 'nul\u0000' })] })]);
    const behind = writeBlocks(writer, [block(3, { orders: [order(4)] })]);
    const further = writeBlocks(writer, [block(4, { orders: [order(5)] })]);
    await assert.rejects(failing, /0x00|null character|invalid byte sequence/i);
    await assert.rejects(behind, /not written: an earlier group failed/);
    await assert.rejects(further, /not written: an earlier group failed/);
    assert.equal((await writer.lastBlock())?.height, 1n);
    const ids = await query<{ id: string }>(url, `SELECT encode(id_bytes, 'hex') AS id FROM orders_current`);
    assert.deepEqual(ids.map((r) => r.id), [order(1).id]);
    assert.equal((await query(url, 'SELECT count(*)::int AS n FROM orders_history'))[0]!.n, 1);
  });

  test('a writer killed inside its transaction leaves nothing of its group, checkpoint included, and fails from then on', async (t) => {
    const { writer, url } = await freshWriter(server, t);
    await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
    // Another session holds a lock the group's last statements need: the writer stops inside its transaction.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    t.after(() => blocker.end());
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE node_signatures IN SHARE MODE');
    const group = [
      block(2, { orders: [order(2), order(1, { status: 3 })] }),
      block(3, { orders: [order(3)], nodeSignatures: [{ id: 'r', sig: Uint8Array.of(1), kind: 1 }] }),
    ];
    const writing = writeBlocks(writer, group);
    const failed = assert.rejects(writing, /terminat|connection/i);
    const pid = await waitFor(async () => {
      const rows = await query<{ pid: number }>(url,
        `SELECT pid FROM pg_stat_activity WHERE application_name = 'ledger-query writer' AND datname = current_database() AND wait_event_type = 'Lock'`);
      return rows[0]?.pid;
    });
    // The rows of the group are written by now, inside the transaction.
    await query(url, 'SELECT pg_terminate_backend($1)', [pid]);
    await failed;
    await blocker.query('ROLLBACK');
    const ids = await query<{ id: string; status: number }>(url, `SELECT encode(id_bytes, 'hex') AS id, status FROM orders_current`);
    assert.deepEqual(ids.map((r) => [r.id, r.status]), [[order(1).id, 1]]);
    assert.deepEqual((await query(url, 'SELECT height FROM last_block')).map((r) => String(r.height)), ['1']);
    assert.deepEqual((await query(url, 'SELECT height FROM blocks')).map((r) => String(r.height)), ['1']);
    assert.equal((await query(url, 'SELECT count(*)::int AS n FROM orders_history'))[0]!.n, 1);
    // The lock went with the session: the writer must not write as if it still held it.
    await assert.rejects(writeBlocks(writer, [block(2, { orders: [order(2)] })]), /session/);
    await assert.rejects(writer.lastBlock(), /session/);
  });

  test('close waits for outstanding writes, then frees the writer lock for the next writer', async () => {
    const { url } = await database(server);
    const first = await PostgresWriter.open(url, {});
    const writing = writeBlocks(first, [block(1, { orders: [order(1)] })]);
    await first.close();
    await writing;
    const second = await PostgresWriter.open(url, {});
    try {
      assert.equal((await second.lastBlock())?.height, 1n);
    } finally {
      await second.close();
    }
  });

  async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > until) throw new Error('timed out waiting');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});
