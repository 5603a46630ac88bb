/**
 * What both backends' index tests (./sqlite/indexes.test.ts,
 * ./postgres/indexes.test.ts) compare: the indexes a migrated store has on
 * orders_current, signer_added, signer_removed and orders_history against
 * the tables of src/store/indexes.ts,
 * and the index each planner path names in the page SQL.
 */
import assert from 'node:assert/strict';
import {
  BUNDLE_INDEXES, HISTORY_BY_ORDER_INDEX, HISTORY_BY_ORDER_NUMBER_INDEX, ORDER_INDEXES, REMOVED_BUNDLE_INDEXES,
  type IndexDefinition,
} from '../../src/store/indexes.js';
import { BUNDLE_INDEX, ORDER_INDEX } from '../../src/store/page-sql.js';
import { BUNDLE_PATHS, ORDER_PATHS, type BundlePathName, type OrderPathName } from '../../src/store/plan.js';

/** The tables whose indexes listings and the reads of one order read. */
export const LISTED_TABLES = ['orders_current', 'signer_added', 'signer_removed', 'orders_history'] as const;

/** An index as a store's catalog describes it, its condition without qualifiers or casts. */
export interface LiveIndex {
  name: string;
  table: string;
  columns: string[];
  where?: string;
  unique: boolean;
}

/** Every index of the tables of src/store/indexes.ts, as each backend's store must have it. */
const SHARED: readonly IndexDefinition[] = [
  ...Object.values(ORDER_INDEXES), ...Object.values(BUNDLE_INDEXES), ...Object.values(REMOVED_BUNDLE_INDEXES),
];
export const DECLARED = {
  embedded: [...SHARED, HISTORY_BY_ORDER_NUMBER_INDEX],
  postgres: [...SHARED, HISTORY_BY_ORDER_INDEX],
} as const;

function asLive(i: IndexDefinition): LiveIndex {
  const live: LiveIndex = { name: i.name, table: i.table, columns: [...i.columns], unique: i.unique === true };
  if (i.where !== undefined) live.where = i.where;
  return live;
}

/** One line per index, by name, so that a difference shows as the lines of the indexes that differ. */
function described(xs: readonly LiveIndex[]): string {
  return [...xs]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((i) => `${i.unique ? 'UNIQUE ' : ''}${i.name} ON ${i.table} (${i.columns.join(', ')})${i.where === undefined ? '' : ` WHERE ${i.where}`}`)
    .join('\n');
}

/**
 * The store has exactly the declared indexes (name, table, columns in order,
 * condition) and its key indexes (`keys`), no other; and every path the
 * planner may choose names an index the store has.
 */
export function assertIndexesAsDeclared(live: readonly LiveIndex[], declared: readonly IndexDefinition[], keys: readonly LiveIndex[]): void {
  assert.equal(described(live), described([...declared.map(asLive), ...keys]));
  const names = new Set(live.map((i) => i.name));
  for (const path of Object.keys(ORDER_PATHS) as OrderPathName[]) {
    assert.ok(names.has(ORDER_INDEX[path]), `order path ${path}: no index ${ORDER_INDEX[path]}`);
  }
  for (const path of Object.keys(BUNDLE_PATHS) as BundlePathName[]) {
    assert.ok(names.has(BUNDLE_INDEX[path]), `bundle path ${path}: no index ${BUNDLE_INDEX[path]}`);
  }
}
