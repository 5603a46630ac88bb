/** PostgreSQL migrations on data stored by an earlier version. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { NETWORK_PARTY } from '../../../src/domain/order.js';
import { ingest } from '../../../src/ingest/ingester.js';
import { SCHEMA_VERSION } from '../../../src/store/postgres/schema.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { checkBlocksStoredBeforeDigests, eventsSource, pricedBlocks } from '../../support/digest-migration.js';
import { HISTORY_SQL, restoredMessage, rowKey, type StoredHistoryRow } from '../../support/history.js';
import { PREVIOUS_HISTORY_SQL, postgresToVersion3, type PreviousHistoryRow } from '../../support/previous-schema.js';
import { createTestDatabase, forEachServer, query } from '../../support/postgres.js';
import { block, hex, order } from '../helpers.js';

/** Each history row as (height/seq, id, version, the message it stands for), sorted. */
const messages = (rows: StoredHistoryRow[]) => rows.map((r) => `${rowKey(r)} ${restoredMessage(r).toString('hex')}`).sort();

forEachServer((server) => {
  test('version 3 keeps every stored block, without a digest: compared by hash only; new blocks by content', async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    const before = await PostgresWriter.open(db.url, {});
    await ingest(eventsSource(pricedBlocks([1, 2], '100')), before);
    await before.close();
    // The blocks table as version 2 kept it, and history as versions 2 and 3 kept it.
    await postgresToVersion3(db.url);
    await query(db.url, 'ALTER TABLE blocks DROP COLUMN digest');
    await query(db.url, 'DELETE FROM schema_migrations WHERE version = 3');

    const writer = await PostgresWriter.open(db.url, {});
    t.after(() => writer.close());
    assert.deepEqual(await query(db.url, 'SELECT max(version) AS v FROM schema_migrations'), [{ v: SCHEMA_VERSION }]);
    assert.deepEqual(
      await query(db.url, 'SELECT height::text AS height, hash, digest FROM blocks ORDER BY height'),
      [{ height: '1', hash: 'hash-1', digest: '' }, { height: '2', hash: 'hash-2', digest: '' }],
    );
    await checkBlocksStoredBeforeDigests(writer);
  });

  test('version 2 leaves out the ids of history rows stored before, and gives back the same messages', async (t) => {
    const db = await createTestDatabase(server);
    t.after(() => db.drop());
    const writer = await PostgresWriter.open(db.url, {});
    await writeBlocks(writer, [
      block(1, { orders: [order(1), order(2, { partyId: NETWORK_PARTY }), order(3, { reference: 'r' })] }),
      block(2, { orders: [order(1, { remaining: 4n, version: 2n })] }),
    ]);
    await writer.close();
    const written = await query<StoredHistoryRow>(db.url, HISTORY_SQL);
    assert.equal(written.length, 4);

    // The table as version 1 kept it: each message whole, no market or party numbers.
    await postgresToVersion3(db.url);
    const previous = await query<PreviousHistoryRow>(db.url, PREVIOUS_HISTORY_SQL);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      for (const row of previous) {
        await client.query('UPDATE orders_history SET message = $1 WHERE vega_time = $2 AND id_bytes = $3', [
          restoredMessage(row), row.vega_time, row.id_bytes,
        ]);
      }
      await client.query('ALTER TABLE orders_history DROP COLUMN market_no, DROP COLUMN party_no');
      // And as version 1 kept blocks, without the digest of version 3.
      await client.query('ALTER TABLE blocks DROP COLUMN digest');
      await client.query('DELETE FROM schema_migrations WHERE version >= 2');
      await client.query('COMMIT');
    } finally {
      await client.end();
    }

    await (await PostgresWriter.open(db.url, {})).close();
    const migrated = await query<StoredHistoryRow>(db.url, HISTORY_SQL);
    // Each block changed each order once, in id order: the rows come back as written, by height.
    assert.deepEqual(messages(migrated), messages(written));
    // 64-character ids are left out; the network party ("network") keeps its message whole.
    assert.deepEqual(migrated.filter((r) => r.market === null).map((r) => r.id_bytes.toString('hex')), [hex(2)]);
    for (const r of migrated.filter((m) => m.market !== null)) {
      assert.equal(r.message.byteLength, restoredMessage(r).byteLength - 198);
    }
  });
});
