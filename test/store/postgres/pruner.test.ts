/**
 * PostgreSQL's pruning as the server sees it (src/store/postgres/pruner.ts):
 * a prune batch is one statement, whatever it prunes (each round trip
 * waits for the server's process to be scheduled on a loaded machine), and
 * the tables pruning deletes from are vacuumed sooner than the defaults
 * would, by autovacuum and by the writer itself. What a batch keeps and
 * forgets: test/store/retention.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { STATUS } from '../../../src/domain/enums.js';
import { parseRetention } from '../../../src/domain/retention.js';
import { WriterPartitions } from '../../../src/store/postgres/partitions.js';
import { PostgresPruner } from '../../../src/store/postgres/pruner.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import type { Block } from '../../../src/domain/block.js';
import { createTestDatabase, forEachServer, query } from '../../support/postgres.js';
import { block, order, placedThenFilled } from '../helpers.js';
import { storeWithoutAutovacuum, vacuumsOfOrdersCurrent } from './writer-vacuums.js';

const SECOND = 1_000_000_000n;

forEachServer((server) => {
  test(`${server.label}: a prune batch is one statement, and prunes what the window no longer keeps`, async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    // 40 blocks a second apart: orders filled in the block they came, one resting, then a block of nothing.
    const writer = await PostgresWriter.open(db.url, {});
    await writeBlocks(writer, [
      block(1, { orders: [order(1, { status: STATUS.ACTIVE })] }),
      ...Array.from({ length: 38 }, (_, i) => block(i + 2, { orders: [order(i + 2, { status: STATUS.FILLED })] })),
      block(40),
    ]);
    await writer.close();

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const sent: string[] = [];
    const query0 = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      sent.push(String(args[0]).trim().slice(0, 40));
      return query0(...args);
    };
    // Partitions of a million blocks: none is wholly older than the window, and none is dropped.
    const pruner = new PostgresPruner(client, 10n * SECOND, new WriterPartitions(async () => 1_000_000n), () => {});
    try {
      await pruneInBatches(pruner, sent);
    } finally {
      await client.end();
    }
    // Blocks 1-29 are older than the window (block 40's time less 10 s): the filled orders are forgotten, the resting one kept.
    assert.deepEqual(await query(db.url, "SELECT encode(id_bytes, 'hex') AS id FROM orders_current"), [
      { id: order(1).id }, ...Array.from({ length: 10 }, (_, i) => ({ id: order(i + 30).id })),
    ].sort((a, b) => a.id.localeCompare(b.id)));
    assert.deepEqual(await query(db.url, 'SELECT height::text AS height FROM orders_history_resting'), [{ height: '1' }]);
    assert.deepEqual(await query(db.url, 'SELECT pruned_below::text AS below FROM retention'), [{ below: '30' }]);
  });

  test(`${server.label}: each order keeps its last change; a batch finds latest rows by it, and by probing where it has none`, async (t) => {
    const blocks = [
      block(1, { orders: [order(1), order(2)] }),
      block(2, { orders: [order(1, { remaining: 5n }), order(3)] }),
      block(3, { orders: [order(2, { version: 2n }), order(2, { version: 3n, price: '90' })] }),
      block(4),
      // The second group: order 1 filled, order 2 cancelled, order 3 rests; then blocks of nothing.
      block(5, { orders: [order(1, { remaining: 0n, status: STATUS.FILLED })] }),
      block(6, { orders: [order(2, { version: 3n, status: STATUS.CANCELLED })] }),
      ...Array.from({ length: 20 }, (_, i) => block(i + 7)),
    ];
    // The oracle: the height of the last block naming each order.
    const expected = new Map<string, string>();
    for (const b of blocks) for (const o of b.orders) expected.set(o.id, String(b.height));
    const lastChanges = async (url: string) => new Map((await query<{ id: string; last: string | null }>(url,
      "SELECT encode(id_bytes, 'hex') AS id, last_height::text AS last FROM orders_current")).map((r) => [r.id, r.last]));
    const kept = (url: string) => query(url, "SELECT encode(id_bytes, 'hex') AS id FROM orders_current ORDER BY id");

    const written: string[] = [];
    for (const unknown of [false, true]) {
      const db = await createTestDatabase(server);
      t.after(() => db.drop());
      const writer = await PostgresWriter.open(db.url, {});
      await writeBlocks(writer, blocks.slice(0, 4));
      await writeBlocks(writer, blocks.slice(4));
      await writer.close();
      assert.deepEqual(await lastChanges(db.url), expected);
      // Cleared: orders stored before migration 7, or copied in, have no last change.
      if (unknown) await query(db.url, 'UPDATE orders_current SET last_height = NULL');
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const pruner = new PostgresPruner(client, 10n * SECOND, new WriterPartitions(async () => 1_000_000n), () => {});
        while ((await pruner.step(1000)).more);
      } finally {
        await client.end();
      }
      // Blocks 1-15 are older than the window: orders 1 and 2 are forgotten, order 3 rests.
      assert.deepEqual(await kept(db.url), [{ id: order(3).id }], unknown ? 'probed' : 'by last change');
      assert.deepEqual(await query(db.url, "SELECT height::text AS height FROM orders_history_resting"), [{ height: '2' }]);
      written.push(JSON.stringify(await query(db.url, 'SELECT rows_pruned::text AS n FROM retention')));
    }
    assert.equal(written[0], written[1], 'the same rows pruned either way');
  });

  test(`${server.label}: the tables pruning deletes from are vacuumed after 2-5% of their rows, without a cost delay`, async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    await (await PostgresWriter.open(db.url, {})).close();
    const options = await query<{ table: string; options: string[] }>(db.url,
      "SELECT relname AS table, reloptions AS options FROM pg_class WHERE relname IN ('orders_current', 'orders_history_resting', 'blocks') ORDER BY relname");
    const setting = (table: string, name: string) => options.find((o) => o.table === table)?.options?.find((o) => o.startsWith(`${name}=`));
    assert.equal(setting('orders_current', 'autovacuum_vacuum_scale_factor'), 'autovacuum_vacuum_scale_factor=0.02');
    for (const table of ['orders_current', 'orders_history_resting', 'blocks']) {
      assert.equal(setting(table, 'autovacuum_vacuum_cost_delay'), 'autovacuum_vacuum_cost_delay=0', table);
    }
  });

  test(`${server.label}: the writer vacuums the tables pruning deletes from, without waiting for autovacuum`, async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    // 3,000 orders placed then filled a block later, a window of 10 blocks: 2,400 are forgotten, past the 1,000 that make a vacuum due.
    assert.notEqual(await vacuumsWhileWriting(db.url, '10s', [placedThenFilled(60, 50)]), 0, 'orders_current was vacuumed while the writer pruned');
    assert.equal((await query<{ n: string }>(db.url, 'SELECT count(*)::text AS n FROM orders_current'))[0]!.n, '600');
    // Without parallel workers: on two cores they took the core the prune batches beside needed.
    const sent = (await query<{ query: string }>(db.url, `SELECT query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query ILIKE 'vacuum%orders_current%'`)).map((r) => r.query);
    assert.ok(sent.length > 0 && sent.every((q) => /^VACUUM \(PARALLEL 0\) /i.test(q)), `the writer's vacuums: ${sent.join(' | ')}`);
  });

  test(`${server.label}: the writer counts the rows updates replace, and vacuums with nothing yet pruned`, async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    // 3,000 orders again, a group a block as a live network's: 2,875 fills each replace a stored row; a window of an hour forgets none.
    assert.notEqual(await vacuumsWhileWriting(db.url, '1h', placedThenFilled(24, 125).map((b) => [b])), 0, 'orders_current was vacuumed for its updates');
    assert.deepEqual(await query(db.url, 'SELECT rows_pruned::text AS n FROM retention'), [{ n: '0' }]);
    assert.equal((await query<{ n: string }>(db.url, 'SELECT count(*)::text AS n FROM orders_current'))[0]!.n, '3000');
  });
});

/** Prunes at most 5 rows a batch until nothing is left (the 29 blocks older than the window take several), checking what each batch sends. */
async function pruneInBatches(pruner: PostgresPruner, sent: string[]): Promise<void> {
  const first = await pruner.step(5);
  // The first also creates the session's function and lists the partitions (the writer then knows them).
  assert.equal(sent.filter((q) => q.startsWith('SELECT pruned')).length, 1, sent.join(' | '));
  assert.equal(sent.length, 3, `the first batch: ${sent.join(' | ')}`);
  assert.ok(first.rows > 0 && first.more);
  let batches = 1;
  for (let done = first; done.more; batches++) {
    sent.length = 0;
    done = await pruner.step(5);
    assert.equal(sent.length, 1, `one statement a batch: ${sent.join(' | ')}`);
  }
  assert.ok(batches > 2, `${batches} batches`);
}

/**
 * Writes `groups` of blocks with `retention` into a new store whose autovacuum is off
 * for the tables pruning deletes from (./writer-vacuums.ts); waits up to 20 s
 * for a vacuum, and returns how many the server counted.
 */
async function vacuumsWhileWriting(url: string, retention: string, groups: Block[][]): Promise<number> {
  await storeWithoutAutovacuum(url);
  assert.equal(await vacuumsOfOrdersCurrent(url), 0);
  // The servers the tests start load pg_stat_statements, which keeps the statements the writer's vacuum sent.
  await query(url, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const writer = await PostgresWriter.open(url, { retention: parseRetention(retention)! });
  let seen = 0;
  try {
    for (const blocks of groups) await writeBlocks(writer, blocks);
    // The vacuum runs beside the writer; the server counts it once it ends.
    for (const until = Date.now() + 20_000; seen === 0 && Date.now() < until; await sleep(100)) seen = await vacuumsOfOrdersCurrent(url);
  } finally {
    await writer.close();
  }
  return seen;
}
