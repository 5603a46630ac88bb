/**
 * EXPLAIN of the one statement a page runs on PostgreSQL, for every filter
 * shape, both orderings, both modes, with and without a cursor: the rows come
 * from index scans bounded by the listing key (the cursor a seek, not a
 * filter), IN lists on the driving index are merged branches, and nothing is
 * sorted or read by a sequential scan. PostgreSQL picks its indexes itself;
 * the planner's choice (../plan-shapes.ts) must be among those it may use.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { TYPE } from '../../../src/domain/enums.js';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/store.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { writeBlocks } from '../../../src/store/store.js';
import { createTestDatabase, forEachServer, type TestDatabase } from '../../support/postgres.js';
import { BUNDLE_CURSOR, BUNDLE_SHAPES, cursorKey, ORDER_SHAPES, requests, skewedBook } from '../plan-shapes.js';

async function analyze(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('ANALYZE');
  await c.end();
}

/**
 * Shapes whose values most orders hold: PostgreSQL may rightly walk the time
 * index and filter instead (nearly every row it reads matches).
 */
const WALKS_TIME = new Set(['common statuses']);

/** The scans of a plan: the index of each, and whether the listing key bounds it. */
function scans(plan: string[]): { index: string; line: string; cond: string }[] {
  const out: { index: string; line: string; cond: string }[] = [];
  plan.forEach((line, i) => {
    const m = /Index (?:Only )?Scan(?: Backward)? using (\w+) on (\w+)/.exec(line);
    if (!m) return;
    const depth = line.search(/\S/);
    let cond = '';
    for (let j = i + 1; j < plan.length && plan[j]!.search(/\S/) > depth && !plan[j]!.includes('->'); j++) {
      if (/Index Cond:/.test(plan[j]!)) cond = plan[j]!;
    }
    out.push({ index: m[1]!, line, cond });
  });
  return out;
}

/**
 * No sequential scan of a table, no sort, no bitmap heap scan (which loses
 * index order); and no node the reader sessions disable, anywhere: before
 * PostgreSQL 18 one adds 10^10 to the plan's cost, which made servers with
 * JIT compile every page (PostgreSQL 18 marks it "Disabled" instead).
 */
function assertIndexedOnly(plan: string[], what: string): void {
  const text = plan.join('\n');
  assert.doesNotMatch(text, /Disabled: true|cost=\d+\.\d+\.\.\d{10,}/, `${what}: a disabled plan node\n${text}`);
  assert.doesNotMatch(text, /Seq Scan on (orders_current|signer_added|node_signatures)/, `${what}: table scan\n${text}`);
  assert.doesNotMatch(text, /(^|->)\s*(Incremental )?Sort\s+\(/m, `${what}: sorts\n${text}`);
  assert.doesNotMatch(text, /Bitmap Heap Scan on (orders_current|signer_added)/, `${what}: bitmap scan\n${text}`);
}

forEachServer((server) => {
  let db: TestDatabase;
  let store: PostgresStore;

  before(async () => {
    db = await createTestDatabase(server);
    const writer = await PostgresWriter.open(db.url);
    // Larger than the embedded store's book: with a few thousand rows PostgreSQL rightly reads the whole table.
    for (const b of skewedBook(200)) await writeBlocks(writer, [b]);
    await writer.close();
    store = await openPostgresStore({ url: db.url, readOnly: true });
    // Statistics, as autovacuum would gather them in a while.
    await analyze(db.url);
  });

  after(async () => {
    await store?.close();
    await db?.drop();
  });

  for (const [name, filter, index, merged] of ORDER_SHAPES) {
    test(`postgres orders plan, ${name}: index scans${merged ? ', merged branches' : ''}, both ways`, async () => {
      for (const req of requests(cursorKey)) {
        const what = `${name} ${JSON.stringify({ ...req, cursor: req.cursor && 'yes' })}`;
        const plan = await store.explainOrders(filter, req);
        assertIndexedOnly(plan, what);
        const orderScans = scans(plan).filter((s) => s.line.includes(' on orders_current'));
        assert.ok(orderScans.length > 0, `${what}: reads orders through an index\n${plan.join('\n')}`);
        for (const s of orderScans) assert.ok(s.index.startsWith('orders_'), `${what}: ${s.line}`);
        if (!index.endsWith('_')) {
          const allowed = WALKS_TIME.has(name) ? [index, 'orders_by_time'] : [index];
          assert.ok(orderScans.some((s) => allowed.includes(s.index)), `${what}: expected ${allowed.join(' or ')}\n${plan.join('\n')}`);
        }
        if (merged) assert.match(plan.join('\n'), /Merge Append/, `${what}: merged branches\n${plan.join('\n')}`);
        if (req.cursor) {
          assert.ok(
            orderScans.some((s) => /ROW\((o\.)?created_at, (o\.)?id_key\) [<>]=? ROW/.test(s.cond)),
            `${what}: seeks to the cursor\n${plan.join('\n')}`,
          );
        }
      }
    });
  }

  test('postgres orders plan: a filter nothing can match runs no query at all', async () => {
    assert.deepEqual(await store.explainOrders({ statuses: [] }, { newestFirst: true, mode: 'first', limit: 10 }), []);
    assert.deepEqual(await store.explainOrders({ liveOnly: true, types: [TYPE.MARKET] }, { newestFirst: true, mode: 'first', limit: 10 }), []);
  });

  for (const [name, filter, index] of BUNDLE_SHAPES) {
    test(`postgres bundles plan, ${name}: index scans both ways`, async () => {
      for (const req of requests(BUNDLE_CURSOR)) {
        const plan = await store.explainBundles(filter, req);
        assertIndexedOnly(plan, name);
        const bundleScans = scans(plan).filter((s) => s.line.includes(' on signer_added'));
        assert.ok(bundleScans.length > 0, `${name}: reads bundles through an index\n${plan.join('\n')}`);
        if (name !== 'all') assert.ok(bundleScans.some((s) => s.index === index), `${name}: expected ${index}\n${plan.join('\n')}`);
      }
    });
  }
});
