/**
 * The index tables (src/store/indexes.ts) and what is derived from them: the
 * planner's paths, the page SQL's index names, the CREATE INDEX statements.
 * Each backend's test compares a migrated store with the same tables
 * (./sqlite/indexes.test.ts, ./postgres/indexes.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BUNDLE_INDEXES,
  createIndexSql,
  HISTORY_BY_ORDER_INDEX,
  HISTORY_BY_ORDER_NUMBER_INDEX,
  REMOVED_BUNDLE_INDEXES,
  ORDER_COLUMN,
  ORDER_INDEXES,
  ORDER_LISTING_KEY,
} from '../../src/store/indexes.js';
import { BUNDLE_INDEX, ORDER_INDEX } from '../../src/store/page-sql.js';
import { BUNDLE_PATHS, ORDER_PATHS } from '../../src/store/plan.js';
import { DECLARED } from './live-indexes.js';

test('every planner path is an index of the table, with the facts the table states', () => {
  assert.deepEqual(Object.keys(ORDER_PATHS), Object.keys(ORDER_INDEXES));
  for (const [name, path] of Object.entries(ORDER_PATHS)) {
    const index = ORDER_INDEXES[name as keyof typeof ORDER_INDEXES];
    assert.equal(path.name, name);
    assert.equal(ORDER_INDEX[name as keyof typeof ORDER_INDEX], index.name);
    assert.deepEqual(path.dimensions, index.dimensions);
    assert.deepEqual(index.leading, index.dimensions.map((d) => ORDER_COLUMN[d]));
    assert.deepEqual(index.columns, [...index.leading, ...ORDER_LISTING_KEY]);
    assert.equal(path.liveOnly, index.where === 'live = 1', name);
    assert.equal(path.referencedOnly, index.where === "reference <> ''", name);
  }
  assert.deepEqual(Object.keys(BUNDLE_PATHS), Object.keys(BUNDLE_INDEXES));
  for (const [name, path] of Object.entries(BUNDLE_PATHS)) {
    const index = BUNDLE_INDEXES[name as keyof typeof BUNDLE_INDEXES];
    assert.equal(path.name, name);
    assert.equal(path.dimension, index.dimension);
    assert.equal(BUNDLE_INDEX[name as keyof typeof BUNDLE_INDEX], index.name);
  }
  for (const declared of Object.values(DECLARED)) {
    assert.equal(new Set(declared.map((i) => i.name)).size, declared.length, 'index names are unique');
  }
});

test('createIndexSql writes the statement as the released migrations wrote theirs', () => {
  assert.equal(createIndexSql(ORDER_INDEXES.time), 'CREATE INDEX orders_by_time ON orders_current (created_at, id_key)');
  assert.equal(
    createIndexSql(ORDER_INDEXES.reference),
    "CREATE INDEX orders_by_reference ON orders_current (reference, created_at, id_key) WHERE reference <> ''",
  );
  assert.equal(
    createIndexSql(ORDER_INDEXES.liveParty),
    'CREATE INDEX orders_live_by_party ON orders_current (party_no, created_at, id_key) WHERE live = 1',
  );
  assert.equal(
    createIndexSql(BUNDLE_INDEXES.epochSeq),
    'CREATE INDEX signer_added_by_epoch ON signer_added (epoch_seq, timestamp, signature_id)',
  );
});

test('the removed bundles have the added ones\' indexes, path for path; history one unique index by order', () => {
  assert.deepEqual(Object.keys(REMOVED_BUNDLE_INDEXES), Object.keys(BUNDLE_INDEXES));
  for (const [path, added] of Object.entries(BUNDLE_INDEXES)) {
    const removed = REMOVED_BUNDLE_INDEXES[path as keyof typeof REMOVED_BUNDLE_INDEXES];
    assert.equal(removed.table, 'signer_removed');
    assert.equal(removed.name, added.name.replace('signer_added_', 'signer_removed_'));
    assert.deepEqual([removed.path, removed.dimension, removed.columns], [added.path, added.dimension, added.columns], path);
  }
  assert.equal(
    createIndexSql(REMOVED_BUNDLE_INDEXES.submitter),
    'CREATE INDEX signer_removed_by_submitter ON signer_removed (submitter, timestamp, signature_id)',
  );
  assert.equal(
    createIndexSql(HISTORY_BY_ORDER_INDEX),
    'CREATE UNIQUE INDEX orders_history_by_order ON orders_history (id_bytes, version, height)',
  );
  assert.equal(
    createIndexSql(HISTORY_BY_ORDER_NUMBER_INDEX),
    'CREATE UNIQUE INDEX orders_history_by_order ON orders_history (order_no, version, height)',
  );
});
