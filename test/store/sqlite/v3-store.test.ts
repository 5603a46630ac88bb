/**
 * A store written by the previous version (schema 3, test/fixtures/store-v3)
 * opens, migrates, and answers exactly as a fresh ingest of the same events:
 * every filter, both orderings, both directions, whole walks; then both take
 * the same new blocks and still agree.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { BundleFilter, BundleKey } from '../../../src/domain/bundle.js';
import { STATUS, TYPE } from '../../../src/domain/enums.js';
import type { OrderFilter, OrderKey } from '../../../src/domain/order.js';
import type { Page, PageRequest } from '../../../src/domain/page.js';
import { fileSource } from '../../../src/ingest/file-source.js';
import { ingest } from '../../../src/ingest/ingester.js';
import { SqliteWriter } from '../../../src/store/sqlite/writer.js';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/store.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite/schema.js';
import { writeBlocks } from '../../../src/store/store.js';
import { block, hex, order, tempDatabase } from '../helpers.js';

const FIXTURE = fileURLToPath(new URL('../../../../test/fixtures/store-v3/', import.meta.url));
const unzip = (name: string, to: string) => writeFileSync(to, gunzipSync(readFileSync(join(FIXTURE, name))));

const ORDER_FILTERS: OrderFilter[] = [
  {}, { liveOnly: true }, { statuses: [STATUS.ACTIVE, STATUS.PARKED] }, { statuses: [STATUS.REJECTED] }, { types: [TYPE.NETWORK] },
  { partyIds: ['network'] }, { excludeLiquidity: true }, { reference: 'ref-1' }, { timeInForces: [2, 3] },
  { dateRange: { start: 1_700_000_010_123_456_789n, end: 1_700_000_020_123_458_000n } },
];

/** Whole walks forward and backward, in both orderings, pages of 7. */
async function walks<K>(list: (p: PageRequest<K>) => Promise<Page<K>>): Promise<Page<K>[]> {
  const pages: Page<K>[] = [];
  for (const newestFirst of [true, false]) {
    for (const mode of ['first', 'last'] as const) {
      let cursor: K | undefined;
      for (let i = 0; i < 100; i++) {
        const page = await list({ newestFirst, mode, limit: 7, ...(cursor === undefined ? {} : { cursor }) });
        pages.push(page);
        const more = mode === 'first' ? page.hasNextPage : page.hasPreviousPage;
        if (!more) break;
        cursor = (mode === 'first' ? page.rows.at(-1) : page.rows[0])!.key;
      }
    }
  }
  return pages;
}

async function everything(store: SqliteStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const f of ORDER_FILTERS) out.push(await walks<OrderKey>((p) => store.listOrders(f, p)));
  const bundleFilters: BundleFilter[] = [{}, { epochSeq: 2n }];
  for (const f of bundleFilters) out.push(await walks<BundleKey>((p) => store.listBundles(f, p)));
  return out;
}

test('a store of the previous version answers, once migrated, as a fresh ingest of the same events', async (t) => {
  const { dir, path } = tempDatabase(t);
  unzip('ledger.db.gz', path);
  const events = join(dir, 'events.evt');
  unzip('events.evt.gz', events);

  const migrated = openSqliteStore({ path });
  t.after(() => migrated.close());
  const freshPath = join(dir, 'fresh.db');
  const freshWriter = await SqliteWriter.open(freshPath);
  t.after(() => freshWriter.close());
  await ingest(fileSource(events), freshWriter);
  const fresh = openSqliteStore({ path: freshPath, readOnly: true });
  t.after(() => fresh.close());

  const answers = await everything(fresh);
  const rows = (answers[0] as Page<unknown>[])[0]!.rows;
  assert.equal(rows.length, 7, 'the fixture has orders');
  const nodes = (answers[0] as Page<unknown>[]).flatMap((p) => p.rows.map((r) => JSON.parse(r.json) as Record<string, unknown>));
  assert.ok(nodes.some((n) => n.peggedOrder === null) && nodes.some((n) => n.peggedOrder !== null), 'pegged orders of both kinds');
  assert.ok(nodes.every((n) => BigInt(n.createdAt as string) % 1000n === 0n), 'times on the microsecond');
  assert.deepEqual(await everything(migrated), answers);
  assert.equal((await migrated.lastBlock())?.height, 30n);

  // Both take the same new blocks: an order of an existing party, a state change of an old order, a new market.
  const old = JSON.parse(rows[0]!.json) as { id: string; marketId: string; partyId: string };
  const next = block(31, {
    chainId: 'fixture-chain',
    orders: [
      order(1, { partyId: 'network', type: TYPE.NETWORK }),
      order(2, { marketId: hex(0xbeef) }),
      order(3, { id: old.id, marketId: old.marketId, partyId: old.partyId, status: STATUS.CANCELLED }),
    ],
  });
  const migratedWriter = await SqliteWriter.open(path);
  t.after(() => migratedWriter.close());
  for (const writer of [migratedWriter, freshWriter]) await writeBlocks(writer, [next]);
  assert.deepEqual(await everything(migrated), await everything(fresh));
});

test('the fixture is a store of schema 3, written before times were kept on the microsecond', (t) => {
  const { path } = tempDatabase(t);
  unzip('ledger.db.gz', path);
  const bytes = readFileSync(path);
  // user_version is the big-endian integer at byte 60 of the SQLite header.
  assert.equal(bytes.readUInt32BE(60), 3);
  assert.ok(SCHEMA_VERSION > 3);
});
