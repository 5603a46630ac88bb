/** Writing blocks into the SQLite store: atomicity, history, current state, reopening, read-only use, migrations. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { blockDigest } from '../../../src/domain/block-digest.js';
import { STATUS, TIF, TYPE } from '../../../src/domain/enums.js';
import { NETWORK_PARTY, isLive, type Order } from '../../../src/domain/order.js';
import type { PageRequest } from '../../../src/domain/page.js';
import { decodeOrder, encodeOrder } from '../../../src/wire/order-message.js';
import { PAGE_BYTES } from '../../../src/store/sqlite/database.js';
import { openSqliteStore } from '../../../src/store/sqlite/store.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { MIGRATIONS } from '../../../src/store/sqlite/migrations.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite/schema.js';
import { block, blockTime, hex, order, tempDatabase, tempStore } from '../helpers.js';
import { HISTORY_SQL, restoredMessage, type StoredHistoryRow } from '../../support/history.js';
import { SchemaVersionError } from '../../../src/errors.js';
import { writeBlocks } from '../../../src/store/store.js';
import { ingest } from '../../../src/ingest/ingester.js';
import { checkBlocksStoredBeforeDigests, eventsSource, pricedBlocks } from '../../support/digest-migration.js';
import { PREVIOUS_HISTORY_SQL, sqliteToVersion6, type PreviousHistoryRow } from '../../support/previous-schema.js';

const FIRST_100: PageRequest<never> = { newestFirst: false, mode: 'first', limit: 100 };

function inspect(path: string): Database.Database {
  const db = new Database(path, { readonly: true });
  db.defaultSafeIntegers(true);
  return db;
}

/** History rows as [order id, block height, the order its message decodes to], in the order of blocks and of each block's rows. */
function history(db: Database.Database): [string, bigint, Order][] {
  const rows = db.prepare(`${HISTORY_SQL} ORDER BY h.height, h.seq`).all() as StoredHistoryRow[];
  return rows.map((row, i) => {
    const order = decodeOrder(restoredMessage(row));
    const before = rows[i - 1];
    const first = before === undefined || BigInt(before.height) !== BigInt(row.height);
    assert.equal(BigInt(row.seq), first ? 0n : BigInt(before.seq) + 1n, 'a block numbers its rows from 0');
    assert.equal(BigInt(row.version), order.version, "the row's version is its message's");
    return [row.id_bytes.toString('hex'), BigInt(row.height), order];
  });
}

test("history keeps the last state of each version of an order in a block, in the order of each one's last update", async (t) => {
  const { store, writer, path } = await tempStore(t);
  const amended = { price: '101', version: 2n };
  // Order 1 is partly filled, amended twice (versions 2 and 3) and filled; order 2 is filled in between.
  const events = [
    order(1), order(2), order(1, { remaining: 8n }), order(1, { remaining: 8n, ...amended }),
    order(1, { remaining: 8n, price: '102', version: 3n }), order(2, { remaining: 5n }),
    order(1, { remaining: 0n, price: '102', version: 3n, status: STATUS.FILLED }),
  ];
  await writeBlocks(writer, [block(1, { orders: events })]);
  const cancelled = order(2, { remaining: 5n, status: STATUS.CANCELLED });
  await writeBlocks(writer, [block(2, { orders: [cancelled] })]);

  const page = await store.listOrders({}, FIRST_100);
  const nodes = page.rows.map((r) => JSON.parse(r.json) as Record<string, unknown>);
  assert.deepEqual(nodes.map((n) => [n.id, n.status, n.remaining, n.price, n.version]), [
    [hex(1), 'STATUS_FILLED', '0', '102', '3'],
    [hex(2), 'STATUS_CANCELLED', '5', '100', '1'],
  ]);

  const db = inspect(path);
  t.after(() => db.close());
  // The original's ordered map: a key set again moves to the back, so order 2's row comes after version 2 of order 1.
  assert.deepEqual(history(db).map(([id, height, o]) => [id, height, o.version, o.remaining, o.price]), [
    [hex(1), 1n, 1n, 8n, '100'],
    [hex(1), 1n, 2n, 8n, '101'],
    [hex(2), 1n, 1n, 5n, '100'],
    [hex(1), 1n, 3n, 0n, '102'],
    [hex(2), 2n, 1n, 5n, '100'],
  ]);
  const rows = db.prepare(`${HISTORY_SQL} ORDER BY h.height, h.seq`).all() as StoredHistoryRow[];
  assert.deepEqual(rows.map((r) => restoredMessage(r)), [2, 3, 5, 6].map((i) => Buffer.from(encodeOrder(events[i]!))).concat(
    [Buffer.from(encodeOrder(cancelled))]), 'each row keeps the message of its last update');
  const current = db.prepare('SELECT vega_time FROM orders_current WHERE id_bytes = unhex(?)').pluck().get(hex(1));
  assert.equal(current, blockTime(1n), 'vega_time is the block time of the last change');
});

test('two blocks with the same time each keep their own rows, by height', async (t) => {
  const { writer, path } = await tempStore(t);
  await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
  await writeBlocks(writer, [{ ...block(2, { orders: [order(1, { remaining: 2n })] }), time: blockTime(1n) }]);
  const db = inspect(path);
  t.after(() => db.close());
  assert.deepEqual(history(db).map(([id, height, o]) => [id, height, o.remaining]), [[hex(1), 1n, 10n], [hex(1), 2n, 2n]]);
});

test('in one group too, many rows to a statement, each block keeps its rows in its order', async (t) => {
  const { writer, path } = await tempStore(t);
  const ids = Array.from({ length: 100 }, (_, i) => i + 1);
  await writeBlocks(writer, [
    block(1, { orders: ids.map((i) => order(i)) }),
    { ...block(2, { orders: ids.map((i) => order(101 - i, { remaining: BigInt(i) })) }), time: blockTime(1n) },
  ]);
  const db = inspect(path);
  t.after(() => db.close());
  assert.deepEqual(history(db).map(([id, height, o]) => [id, height, o.remaining]), [
    ...ids.map((i) => [hex(i), 1n, 10n]),
    ...ids.map((i) => [hex(101 - i), 2n, BigInt(i)]),
  ]);
});

test('every kind of change to an order reaches the current state, and the planner counts follow', async (t) => {
  const { store, writer, path } = await tempStore(t);
  await writeBlocks(writer, [block(1, { orders: [order(1), order(2), order(3)] })]);
  // A fill (no indexed column changes), a status change, and a change of lifelong columns.
  await writeBlocks(writer, [block(2, {
    orders: [
      order(1, { remaining: 3n }),
      order(2, { status: STATUS.CANCELLED }),
      order(3, { marketId: hex(77), partyId: hex(88), type: TYPE.NETWORK, reference: 'moved', createdAt: 5000n }),
    ],
  })]);
  const db = inspect(path);
  t.after(() => db.close());
  const rows = db.prepare(`
    SELECT lower(hex(id_bytes)), remaining, status, live, m.id, p.id, type, reference, created_at
    FROM orders_current JOIN markets AS m ON m.no = market_no JOIN parties AS p ON p.no = party_no ORDER BY id_bytes
  `).raw(true).all();
  assert.deepEqual(rows, [
    [hex(1), 3n, 1n, 1n, hex(1001), hex(2001), 1n, '', order(1).createdAt],
    [hex(2), 10n, 3n, 0n, hex(1002), hex(2002), 1n, '', order(2).createdAt],
    [hex(3), 10n, 1n, 0n, hex(77), hex(88), 3n, 'moved', 5000n],
  ]);
  // Counts kept by the writer equal counting the table itself.
  const stats = store.orderStats();
  for (const [dimension, column] of [['status', 'status'], ['type', 'type'], ['timeInForce', 'time_in_force']] as const) {
    for (const [value, n] of db.prepare(`SELECT ${column}, count(*) FROM orders_current GROUP BY 1`).raw(true).all() as [bigint, bigint][]) {
      assert.equal(stats.count(dimension, Number(value)), Number(n), `${dimension} ${value}`);
    }
  }
  assert.equal(stats.total, 3);
  assert.equal(stats.live, 1);
  assert.equal(stats.count('status', STATUS.ACTIVE), 2);
  assert.equal(stats.count('status', STATUS.CANCELLED), 1);
  assert.equal(stats.count('timeInForce', TIF.GTC), 3);
  assert.equal(stats.count('type', TYPE.NETWORK), 1);
});

test('lastBlock is stored with the block, survives reopening, and a block not newer than it is refused whole', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  assert.equal(await writer.lastBlock(), undefined);
  await writeBlocks(writer, [block(5, { orders: [order(1)], chainId: 'chain-a' })]);
  assert.deepEqual(await writer.lastBlock(), { height: 5n, time: blockTime(5n), chainId: 'chain-a', hash: 'hash-5' });
  await assert.rejects(writeBlocks(writer, [block(5, { orders: [order(2)] })]), /not newer/);
  await assert.rejects(writeBlocks(writer, [block(4, { orders: [order(3)] })]), /not newer/);
  await writer.close();

  const reopened = openSqliteStore({ path });
  t.after(() => reopened.close());
  assert.deepEqual(await reopened.lastBlock(), { height: 5n, time: blockTime(5n), chainId: 'chain-a', hash: 'hash-5' });
  const again = await SqliteWriter.open(path);
  t.after(() => again.close());
  assert.deepEqual(
    await again.storedBlocks(1n, 9n),
    new Map([[5n, { hash: 'hash-5', digest: blockDigest(block(5, { orders: [order(1)], chainId: 'chain-a' })) }]]),
    'the hash and digest of each stored block, by height',
  );
  const page = await reopened.listOrders({}, FIRST_100);
  assert.deepEqual(page.rows.map((r) => r.key.id), [hex(1)], 'the refused blocks left nothing behind');
});

test('a block that fails half way is rolled back: none of its rows and not its height are stored', async (t) => {
  const { store, writer } = await tempStore(t);
  await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
  // createdAt beyond int64 cannot be bound: the failure comes after the first order was written.
  const bad = block(2, {
    orders: [order(2), order(3, { createdAt: 1n << 64n })],
    signersAdded: [{ signatureId: 'ab', validatorId: 'cd', timestamp: 1n, newSigner: 'n', submitter: 's', nonce: '1', epochSeq: 1n }],
  });
  await assert.rejects(writeBlocks(writer, [bad]), { code: 'LQ_INTERNAL', message: /bigint is too big/ });
  assert.equal((await store.lastBlock())?.height, 1n);
  assert.deepEqual((await store.listOrders({}, FIRST_100)).rows.map((r) => r.key.id), [hex(1)]);
  assert.equal((await store.listBundles({}, FIRST_100)).rows.length, 0);
  assert.equal(store.orderStats().total, 1, 'counts rolled back too');
  // The same height can then be written properly.
  await writeBlocks(writer, [block(2, { orders: [order(2)] })]);
  assert.equal((await store.lastBlock())?.height, 2n);
});

test('blocks written together are one transaction: a failing block takes the whole group back', async (t) => {
  const { store, writer } = await tempStore(t);
  await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
  const bad = block(4, { orders: [order(4, { createdAt: 1n << 64n })] });
  await assert.rejects(writeBlocks(writer, [block(2, { orders: [order(2)] }), block(3, { orders: [order(3)] }), bad]), { code: 'LQ_INTERNAL', message: /bigint is too big/ });
  assert.equal((await store.lastBlock())?.height, 1n);
  assert.deepEqual((await store.listOrders({}, FIRST_100)).rows.map((r) => r.key.id), [hex(1)]);
  // Out of order within a group is refused as well.
  await assert.rejects(writeBlocks(writer, [block(3, { orders: [order(3)] }), block(2, { orders: [order(2)] })]), /not newer/);
  assert.equal((await store.lastBlock())?.height, 1n);
});

test('a group of blocks keeps each block\'s history and ends at its last block', async (t) => {
  const { store, writer, path } = await tempStore(t);
  const blocks = [
    block(1, { orders: [order(1)] }),
    block(2, { orders: [order(1, { remaining: 6n, version: 2n }), order(2)] }),
    block(3, { orders: [order(1, { status: STATUS.FILLED, remaining: 0n, version: 3n })] }),
  ];
  await writeBlocks(writer, blocks);
  assert.deepEqual(await store.lastBlock(), { height: 3n, time: blockTime(3n), chainId: block(3).chainId, hash: 'hash-3' });
  assert.deepEqual(await writer.storedBlocks(2n, 3n), new Map([
    [2n, { hash: 'hash-2', digest: blockDigest(blocks[1]!) }],
    [3n, { hash: 'hash-3', digest: blockDigest(blocks[2]!) }],
  ]));
  const db = inspect(path);
  t.after(() => db.close());
  assert.deepEqual(history(db).map(([id, height, o]) => [id, height, o.remaining]), [
    [hex(1), 1n, 10n],
    [hex(1), 2n, 6n],
    [hex(2), 2n, 10n],
    [hex(1), 3n, 0n],
  ]);
  assert.equal(store.orderStats().count('status', STATUS.FILLED), 1);
  assert.equal(store.orderStats().count('status', STATUS.ACTIVE), 1);
});

test('64-bit values keep every digit: uint64 above int64, int64 above 2^53 (times on the microsecond), block heights', async (t) => {
  const { store, writer, path } = await tempStore(t);
  const max64 = (1n << 64n) - 1n;
  const big = (1n << 62n) + 1n;
  const first = block(1, {
    orders: [order(1, {
      size: max64, remaining: 1n << 63n, version: big, batchId: max64, createdAt: big, expiresAt: -big, updatedAt: big + 2n,
      icebergOrder: { peakSize: max64, minimumVisibleSize: big, reservedRemaining: 1n << 63n },
    })],
  });
  await writeBlocks(writer, [first]);
  const node = JSON.parse((await store.listOrders({}, FIRST_100)).rows[0]!.json) as Record<string, unknown>;
  assert.equal(node.size, String(max64));
  assert.equal(node.remaining, String(1n << 63n));
  assert.equal(node.version, String(big));
  assert.equal(node.batchId, String(max64));
  // big is 4611686018427387905: times keep every digit down to the microsecond, rounded down.
  assert.equal(node.createdAt, '4611686018427387000');
  assert.equal(node.expiresAt, '-4611686018427388000');
  assert.equal(node.updatedAt, '4611686018427387000');
  assert.deepEqual(node.icebergOrder, { peakSize: String(max64), minimumVisibleSize: String(big), reservedRemaining: String(1n << 63n) });
  const page = await store.listOrders({ dateRange: { start: big, end: big + 1000n } }, FIRST_100);
  assert.deepEqual(page.rows.map((r) => r.key), [{ createdAt: 4611686018427387000n, id: hex(1) }], 'key read back as an exact bigint');

  await writeBlocks(writer, [{ ...block(2, { orders: [order(2, { version: max64 })] }), height: max64 }]);
  assert.equal((await store.lastBlock())?.height, max64);
  await store.close();
  const db = inspect(path);
  t.after(() => db.close());
  const [stored, last] = db.prepare(`${HISTORY_SQL} ORDER BY h.id_bytes`).all() as StoredHistoryRow[];
  assert.ok(stored!.market !== null && stored!.message.byteLength < first.orderMessages[0]!.byteLength, 'the ids are left out');
  assert.deepEqual(restoredMessage(stored!), Buffer.from(first.orderMessages[0]!), 'history gives back the message verbatim');
  assert.deepEqual(history(db)[0]![2], first.orders[0]);
  assert.deepEqual([stored!.height, stored!.version], [1n, big]);
  // Beyond int64, as the store keeps other uint64 values: their decimal text.
  assert.deepEqual([last!.height, last!.version], [String(max64), String(max64)]);
});

test('a read-only store reads what a writer commits, and refuses to write', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
  const reader = openSqliteStore({ path, readOnly: true });
  t.after(() => reader.close());
  assert.equal((await reader.listOrders({}, FIRST_100)).rows.length, 1);
  await writeBlocks(writer, [block(2, { orders: [order(2)] })]);
  assert.equal((await reader.listOrders({}, FIRST_100)).rows.length, 2, 'sees the later commit');
  assert.equal((await reader.lastBlock())?.height, 2n);
  // A query store has no door to write through: the connection itself is read-only.
  assert.throws(() => (reader as unknown as { connection: { db: Database.Database } }).connection.db.exec('DELETE FROM orders_current'), /readonly/);
});

test('the last block is read again only after a commit, and every commit is seen at once: across checkpoints and renewals', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
  // A tiny statement bound: the connection is renewed by the second distinct page query.
  const reader = openSqliteStore({ path, readOnly: true, statementCacheBytes: 1 });
  t.after(() => reader.close());
  const other = new Database(path);
  t.after(() => other.close());
  for (let height = 2; height <= 7; height++) {
    const before = reader.lastBlockSync();
    assert.equal(before?.height, BigInt(height - 1));
    assert.equal(reader.lastBlockSync(), before, 'no commit since: the block read before, not read again');
    if (height === 4) other.pragma('wal_checkpoint(TRUNCATE)'); // the next commit starts the WAL over
    if (height === 6) await reader.listOrders({ marketIds: ['m'] }, FIRST_100);
    await writeBlocks(writer, [block(height, { orders: [order(height)] })]);
    assert.equal(reader.lastBlockSync()?.height, BigInt(height), `block ${height} seen as soon as it is committed`);
    await reader.listOrders({}, FIRST_100);
  }
  assert.ok(reader.statementCacheSize.renewals > 0, 'the connection was renewed on the way');
  assert.deepEqual(reader.lastBlockSync(), { height: 7n, time: blockTime(7n), chainId: block(7).chainId, hash: 'hash-7' });
});

test('read-only opening needs an existing file at the current schema version', async (t) => {
  const { path } = tempDatabase(t);
  assert.throws(() => openSqliteStore({ path, readOnly: true }), { code: 'LQ_SYSTEM', message: /unable to open database file/ });
  assert.equal(existsSync(path), false, 'a read-only opening creates nothing');
  const old = new Database(path);
  old.exec('CREATE TABLE something (x)');
  old.close();
  assert.throws(() => openSqliteStore({ path, readOnly: true }), SchemaVersionError);
  // Opening read-write migrates it; then read-only works.
  await openSqliteStore({ path }).close();
  await openSqliteStore({ path, readOnly: true }).close();
});

test('migrations: a new file is at the latest version, reopening changes nothing, a newer file is refused', async (t) => {
  const { path } = tempDatabase(t);
  const writer = await SqliteWriter.open(path);
  await writeBlocks(writer, [block(1, { orders: [order(1)] })]);
  await writer.close();
  const db = new Database(path);
  assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  assert.equal(db.pragma('page_size', { simple: true }), PAGE_BYTES, 'a new file has the pages the store chose');
  assert.notEqual(PAGE_BYTES, 4096, "and they are not SQLite's default");
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all();
  assert.deepEqual(tables, [
    'blocks', 'last_block', 'markets', 'node_signatures', 'order_counts', 'order_id_levels',
    'order_ids_0', 'order_ids_1', 'order_ids_2', 'order_ids_3', 'order_ids_4', 'order_ids_5',
    'orders_current', 'orders_history', 'parties', 'retention', 'signer_added', 'signer_removed',
  ]);
  db.close();

  const again = openSqliteStore({ path });
  assert.equal((await again.listOrders({}, FIRST_100)).rows.length, 1);
  await again.close();

  const bump = new Database(path);
  bump.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  bump.close();
  assert.throws(() => openSqliteStore({ path }), SchemaVersionError);
  assert.throws(() => openSqliteStore({ path, readOnly: true }), SchemaVersionError);
});

test('signer events are keyed by signature id, node signatures by (resource, bytes)', async (t) => {
  const { store, writer, path } = await tempStore(t);
  const added = { signatureId: 'AA01', validatorId: 'V1', timestamp: 10_999n, newSigner: '0xNew', submitter: '0XSub', nonce: '7', epochSeq: 3n };
  await writeBlocks(writer, [block(1, {
    signersAdded: [added],
    nodeSignatures: [{ id: 'aa01', sig: new Uint8Array([2]), kind: 3 }, { id: 'AA01', sig: new Uint8Array([2]), kind: 3 }],
    signersRemoved: [{
      signatureSubmitters: [{ signatureId: 'R1', submitter: '0xA' }, { signatureId: 'R2', submitter: '0XB' }],
      validatorId: 'V1', timestamp: 11_999n, oldSigner: '0xOld', nonce: '8', epochSeq: 4n,
    }],
  })]);
  // The same bundle again (replaced), and the same signature again (kept once).
  await writeBlocks(writer, [block(2, {
    signersAdded: [{ ...added, nonce: '9' }],
    nodeSignatures: [{ id: 'aa01', sig: new Uint8Array([2]), kind: 3 }, { id: 'aa01', sig: new Uint8Array([1]), kind: 3 }],
  })]);
  const page = await store.listBundles({}, FIRST_100);
  assert.equal(page.rows.length, 1);
  assert.deepEqual(page.rows[0]!.key, { timestamp: 10_000n, signatureId: 'aa01' });
  assert.deepEqual(JSON.parse(page.rows[0]!.json), {
    newSigner: '0xnew', submitter: '0xsub', nonce: '9', timestamp: '10000', signatures: '0x0102', epochSeq: '3',
  });
  const db = inspect(path);
  t.after(() => db.close());
  // One row per submitter; addresses as the original prints them, the timestamp on the whole microsecond.
  assert.deepEqual(db.prepare('SELECT signature_id, submitter, validator_id, old_signer, timestamp, epoch_seq FROM signer_removed ORDER BY 1').raw(true).all(), [
    ['r1', '0xa', 'v1', '0xold', 11_000n, 4n],
    ['r2', '0xb', 'v1', '0xold', 11_000n, 4n],
  ]);
  assert.equal(db.prepare('SELECT count(*) FROM node_signatures').pluck().get(), 2n);
});

/** A row of orders_current / orders_history as schema version 1 stored it. */
function v1Row(o: Order, vegaTime: bigint): Record<string, unknown> {
  const u64 = (v: bigint) => (v < 1n << 63n ? v : v.toString());
  return {
    id: o.id.toLowerCase(), market_id: o.marketId.toLowerCase(), party_id: o.partyId.toLowerCase(), side: o.side,
    price: o.price, size: u64(o.size), remaining: u64(o.remaining), time_in_force: o.timeInForce, type: o.type,
    created_at: o.createdAt, status: o.status, expires_at: o.expiresAt, reference: o.reference, reason: o.reason ?? null,
    updated_at: o.updatedAt, version: u64(o.version), batch_id: u64(o.batchId),
    pegged_reference: o.peggedOrder?.reference ?? null, pegged_offset: o.peggedOrder?.offset ?? null,
    lp_id: o.liquidityProvisionId, post_only: o.postOnly ? 1 : 0, reduce_only: o.reduceOnly ? 1 : 0,
    iceberg_peak_size: o.icebergOrder ? u64(o.icebergOrder.peakSize) : null,
    iceberg_minimum_visible_size: o.icebergOrder ? u64(o.icebergOrder.minimumVisibleSize) : null,
    iceberg_reserved_remaining: o.icebergOrder ? u64(o.icebergOrder.reservedRemaining) : null,
    live: isLive(o) ? 1 : 0, vega_time: vegaTime,
  };
}

test('migrations turn a version 1 file into what writing the same blocks today stores', async (t) => {
  const blocks = [
    block(1, { orders: [order(1), order(2, { partyId: NETWORK_PARTY, type: TYPE.NETWORK, timeInForce: TIF.IOC }), order(3, { reference: 'r' })] }),
    block(2, {
      orders: [
        order(1, { remaining: 4n, version: 2n }),
        // Times with nanosecond digits, two in one microsecond: version 4 puts them on the microsecond, ids break the tie.
        order(4, { size: (1n << 64n) - 1n, reason: 0, peggedOrder: { reference: 2, offset: '5' }, createdAt: order(7).createdAt + 999n, updatedAt: 1234567n }),
        order(5, {
          icebergOrder: { peakSize: 3n, minimumVisibleSize: 1n, reservedRemaining: 1n << 63n }, liquidityProvisionId: hex(0xabc).toUpperCase(),
          createdAt: order(7).createdAt + 1n, expiresAt: order(9).createdAt + 5n,
        }),
      ],
    }),
    block(3, { orders: [order(1, { status: STATUS.FILLED, remaining: 0n, version: 3n }), order(3, { status: STATUS.CANCELLED })] }),
  ];
  const filters = [{}, { liveOnly: true }, { partyIds: [hex(2001)] }, { marketIds: [hex(1001), hex(1002)] }, { partyIds: [NETWORK_PARTY] }];

  const fresh = await tempStore(t);
  await writeBlocks(fresh.writer, blocks);
  const expected = await Promise.all(filters.map((f) => fresh.store.listOrders(f, FIRST_100)));
  const expectedHistory = history(inspect(fresh.path));

  const { path } = tempDatabase(t);
  const v1 = new Database(path);
  v1.defaultSafeIntegers(true);
  const up = MIGRATIONS[0]!.up;
  assert.equal(typeof up, 'string');
  v1.exec(up as string);
  v1.pragma('user_version = 1');
  const columns = Object.keys(v1Row(order(1), 0n));
  const insert = (table: string) =>
    v1.prepare(`INSERT OR REPLACE INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
  const [current, past] = [insert('orders_current'), insert('orders_history')];
  for (const b of blocks) {
    for (const o of b.orders) {
      past.run(v1Row(o, b.time));
      v1.prepare('DELETE FROM orders_current WHERE id = ?').run(o.id);
      current.run(v1Row(o, b.time));
    }
  }
  for (const [dimension, column] of [['status', 'status'], ['type', 'type'], ['timeInForce', 'time_in_force'], ['live', 'live']]) {
    v1.exec(`INSERT INTO order_counts SELECT '${dimension}', ${column}, count(*) FROM orders_current GROUP BY ${column}`);
  }
  v1.prepare("INSERT INTO last_block VALUES (1, 3, ?, 'test-chain')").run(blockTime(3n));
  v1.close();

  const migrated = openSqliteStore({ path });
  t.after(() => migrated.close());
  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  for (const [i, f] of filters.entries()) assert.deepEqual(await migrated.listOrders(f, FIRST_100), expected[i], JSON.stringify(f));
  assert.equal(expectedHistory.length, 8);
  // Written before blocks were kept: no row has a block of its time; all take height 0, in (block time, id) order.
  // Of an order's states of one version, the last stays (order 3, cancelled in block 3 still at version 1).
  const lastOfVersion = expectedHistory.filter(([id, h, o]) => !expectedHistory.some(([id2, h2, o2]) => id2 === id && o2.version === o.version && h2 > h));
  assert.equal(lastOfVersion.length, 7);
  const byTimeAndId = lastOfVersion
    .sort(([a, ha], [b, hb]) => (ha !== hb ? (ha < hb ? -1 : 1) : a < b ? -1 : 1))
    .map(([id, , o]) => [id, 0n, o]);
  assert.deepEqual(history(inspect(path)), byTimeAndId);
  // Rows whose ids are 64 hex characters leave them out; the network party's ("network") keeps its message whole.
  const migratedFile = inspect(path);
  t.after(() => migratedFile.close());
  assert.equal(migratedFile.prepare('SELECT count(*) FROM orders_history WHERE market_no IS NULL').pluck().get(), 1n);
  assert.equal(migratedFile.pragma('page_size', { simple: true }), 4096n, 'a file keeps the page size it was created with');
  await writeBlocks(writer, [block(4, { orders: [order(2, { status: STATUS.STOPPED }), order(6, { partyId: hex(2001) })] })]);
  const after = await migrated.listOrders({ partyIds: [hex(2001)] }, FIRST_100);
  assert.deepEqual(after.rows.map((r) => r.key.id), [hex(1), hex(6)], 'new rows use the migrated party numbers');
});

test('migrating from version 5 keeps every stored block, without a digest: compared by hash only; new blocks by content', async (t) => {
  const { path } = tempDatabase(t);
  const before = await SqliteWriter.open(path);
  await ingest(eventsSource(pricedBlocks([1, 2], '100')), before);
  await before.close();
  // The blocks table as version 5 kept it, and history as it kept it too.
  const v5 = new Database(path);
  sqliteToVersion6(v5);
  v5.exec('ALTER TABLE blocks DROP COLUMN digest');
  v5.pragma('user_version = 5');
  v5.close();

  const writer = await SqliteWriter.open(path);
  t.after(() => writer.close());
  const db = inspect(path);
  t.after(() => db.close());
  assert.equal(db.pragma('user_version', { simple: true }), BigInt(SCHEMA_VERSION));
  assert.deepEqual(db.prepare('SELECT height, hash, digest FROM blocks ORDER BY height').raw(true).all(), [[1n, 'hash-1', ''], [2n, 'hash-2', '']]);
  await checkBlocksStoredBeforeDigests(writer);
});
