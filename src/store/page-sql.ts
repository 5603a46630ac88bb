/**
 * The SQL of one page request, for both backends: the plans of ./plan.ts
 * turned into index scans bounded by row-value comparisons on the listing key,
 * one arm per branch, merged in key order. The two schemas share table,
 * column and index names; what their SQL spells differently comes from the
 * dialect. Statements use `?` placeholders (./sql-dialect.ts).
 */
import type { BundleFilter, BundleKey } from '../domain/bundle.js';
import type { OrderFilter, OrderKey } from '../domain/order.js';
import type { PageRequest } from '../domain/page.js';
import { bundleJsonSql, orderJsonSql, removedBundleJsonSql } from './node-json.js';
import {
  BUNDLE_COLUMN,
  BUNDLE_INDEXES,
  REMOVED_BUNDLE_INDEXES,
  BUNDLE_LISTING_KEY,
  mapValues,
  ORDER_COLUMN,
  ORDER_INDEXES,
  ORDER_LISTING_KEY,
  subsetCondition,
  type BundleDimension,
  type BundlePathName,
  type BundleTable,
  type OrderDimension,
  type OrderPathName,
} from './indexes.js';
import { orderKeyOf } from './order-key.js';
import {
  orderKeyRange,
  planBundleQuery,
  planOrderQuery,
  planPage,
  scanRange,
  type KeyRange,
  type OrderPlan,
  type OrderStats,
  type SortDirection,
} from './plan.js';
import { u64, type SqlValue } from './rows.js';
import type { SqlDialect } from './sql-dialect.js';

/** One scan of an index, as SQL: a SELECT without ORDER BY or LIMIT, or a whole statement. */
export interface Arm {
  sql: string;
  params: SqlValue[];
}

/** The SQL one page request runs: its rows (json, k1, k2; k2 NULL where the key needs no more), and whether a row lies beyond the cursor. */
export interface PageQueries {
  rows: Arm;
  beyond?: Arm;
}

// ---------------------------------------------------------------- names

/** Each order path's index (./indexes.ts). */
export const ORDER_INDEX: { readonly [P in OrderPathName]: string } = mapValues(ORDER_INDEXES, (i) => i.name);

/** The tables that intern a dimension's ids, whose number the index holds. */
const INTERNED: Partial<Record<OrderDimension, 'parties' | 'markets'>> = { partyId: 'parties', marketId: 'markets' };

/**
 * The condition that pins an index's leading column to one value (bound to the
 * ?). Indexes hold parties and markets by their interned number; an id never
 * stored has none, and `= NULL` matches nothing, as it should.
 */
const ORDER_PIN: { readonly [D in OrderDimension]: string } = mapValues(ORDER_COLUMN, (column, d) => {
  const interned = INTERNED[d];
  return `o.${column} = ${interned === undefined ? '?' : `(SELECT no FROM ${interned} WHERE id = ?)`}`;
});

/** Each bundle path's index (./indexes.ts), of each bundle table. */
export const BUNDLE_INDEX: { readonly [P in BundlePathName]: string } = mapValues(BUNDLE_INDEXES, (i) => i.name);
const REMOVED_BUNDLE_INDEX: { readonly [P in BundlePathName]: string } = mapValues(REMOVED_BUNDLE_INDEXES, (i) => i.name);

// ---------------------------------------------------------------- keyset SQL

/** Where a listing key (two columns) lies within a range, as row-value comparisons the index can seek on. */
function rangeConditions(
  keyColumns: readonly [string, string],
  range: KeyRange<readonly [SqlValue, SqlValue]>,
  params: SqlValue[],
): string[] {
  const row = `(${keyColumns[0]}, ${keyColumns[1]})`;
  const out: string[] = [];
  if (range.lower) {
    out.push(`${row} ${range.lower.inclusive ? '>=' : '>'} (?, ?)`);
    params.push(...range.lower.key);
  }
  if (range.upper) {
    out.push(`${row} ${range.upper.inclusive ? '<=' : '<'} (?, ?)`);
    params.push(...range.upper.key);
  }
  return out;
}

function armSql(select: string, from: string, conditions: string[]): string {
  return `SELECT ${select} FROM ${from}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}`;
}

const dir = (d: SortDirection) => (d === 'asc' ? 'ASC' : 'DESC');

/**
 * Several arms merged in key order. Each database runs the arms along their
 * indexes and merges them (SQLite: MERGE (UNION ALL); PostgreSQL: Merge
 * Append), reading no more of any arm than the LIMIT needs and never sorting.
 * `output`, when given, is the columns the page returns, if not all: the
 * merge needs both key columns, a caller may not (each column returned is a
 * value per row for the driver to make).
 */
function pageSql(dialect: SqlDialect, arms: Arm[], direction: SortDirection, limit: number, output?: string): Arm {
  const order = `ORDER BY k1 ${dir(direction)}, k2 ${dir(direction)} LIMIT ?`;
  const page: Arm = dialect.limitEachArm && arms.length > 1
    ? {
      sql: `${arms.map((a) => `(${a.sql} ${order})`).join(' UNION ALL ')} ${order}`,
      params: [...arms.flatMap((a) => [...a.params, limit]), limit],
    }
    : {
      sql: `${arms.map((a) => a.sql).join(' UNION ALL ')} ${order}`,
      params: [...arms.flatMap((a) => a.params), limit],
    };
  return output === undefined ? page : { sql: `SELECT ${output} FROM (${page.sql}) AS page`, params: page.params };
}

/** Does any arm yield a row? UNION ALL runs the arms in turn and LIMIT 1 stops at the first row. */
function existsSql(arms: Arm[]): Arm {
  return { sql: `${arms.map((a) => a.sql).join(' UNION ALL ')} LIMIT 1`, params: arms.flatMap((a) => a.params) };
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * Stand-ins for the long JSON expressions in query text: the text (which
 * already encodes the query shape) is a statement cache's key, and is built
 * on every request, so it stays short until a statement is prepared.
 */
const ORDER_JSON = '/*order-json*/';
/** The order node's stand-in, for statements of orders_current AS o joined to markets AS m and parties AS p. */
export const ORDER_JSON_STANDIN = ORDER_JSON;
const BUNDLE_JSON = '/*bundle-json*/';
const REMOVED_BUNDLE_JSON = '/*removed-bundle-json*/';

/** The statement text to prepare: the JSON stand-ins replaced by the dialect's expressions. */
export function expandSql(sql: string, dialect: SqlDialect): string {
  return sql
    .replaceAll(ORDER_JSON, orderJsonSql(dialect, 'o', 'm', 'p'))
    .replaceAll(BUNDLE_JSON, bundleJsonSql(dialect, 'b'))
    .replaceAll(REMOVED_BUNDLE_JSON, removedBundleJsonSql(dialect, 'b'));
}

// ---------------------------------------------------------------- orders

/** What an arm selects, and the tables that needs joined to the order. */
interface Columns {
  select: string;
  joins: string;
}

/** The listing key: (createdAt, id) ascending is (created_at, id_key) ascending (./order-key.ts). */
const ORDER_KEY: readonly [string, string] = [`o.${ORDER_LISTING_KEY[0]}`, `o.${ORDER_LISTING_KEY[1]}`];

/**
 * A page row, and what it reads beside the order: the ids of its market and
 * party, joined by number (a lookup by primary key, cheaper than a scalar
 * subquery). Arms merge on the listing key (k1, k2); a page returns k2 as
 * NULL (ORDER_PAGE): the cursor takes the id from the node (orderIdOfNode),
 * so the driver copies no 32-byte blob per row (BENCHMARKS.md, "Figures behind the code").
 */
const ORDER_ROW: Columns = {
  select: `${ORDER_JSON} AS json, ${ORDER_KEY[0]} AS k1, ${ORDER_KEY[1]} AS k2`,
  joins: ' JOIN markets AS m ON m.no = o.market_no JOIN parties AS p ON p.no = o.party_no',
};
const ORDER_PAGE = 'json, k1, NULL AS k2';
const ORDER_EXISTS: Columns = { select: '1', joins: '' };

function residualOrderConditions(r: OrderPlan['residual'], params: SqlValue[]): string[] {
  const out: string[] = [];
  const inList = (d: OrderDimension, values: readonly (string | number)[] | undefined) => {
    if (values === undefined) return;
    const list = placeholders(values.length);
    const interned = INTERNED[d];
    out.push(`o.${ORDER_COLUMN[d]} IN (${interned ? `SELECT no FROM ${interned} WHERE id IN (${list})` : list})`);
    params.push(...values);
  };
  inList('status', r.statuses);
  inList('type', r.types);
  inList('timeInForce', r.timeInForces);
  inList('partyId', r.partyIds);
  inList('marketId', r.marketIds);
  if (r.reference !== undefined) {
    out.push(ORDER_PIN.reference);
    params.push(r.reference);
  }
  if (r.excludeLiquidity) out.push(`o.lp_id = ''`);
  if (r.liveOnly) out.push(subsetCondition('live', 'o.'));
  return out;
}

/** A key range with each key as the values of the two key columns. */
function asColumns<K>(range: KeyRange<K>, columns: (key: K) => readonly [SqlValue, SqlValue]): KeyRange<readonly [SqlValue, SqlValue]> {
  const out: KeyRange<readonly [SqlValue, SqlValue]> = {};
  if (range.lower) out.lower = { key: columns(range.lower.key), inclusive: range.lower.inclusive };
  if (range.upper) out.upper = { key: columns(range.upper.key), inclusive: range.upper.inclusive };
  return out;
}

/** One arm per branch of the plan: the branch's values pin the index's leading columns. */
function orderArms(dialect: SqlDialect, plan: OrderPlan, range: KeyRange<OrderKey>, columns: Columns): Arm[] {
  const name = plan.path.name as OrderPathName;
  const index = ORDER_INDEX[name];
  const subset = ORDER_INDEXES[name].subset;
  const keyRange = asColumns(range, (k) => [k.createdAt, orderKeyOf(k.id)]);
  return plan.branches.map((values) => {
    const params: SqlValue[] = [];
    const conditions: string[] = plan.path.dimensions.map((d) => ORDER_PIN[d]);
    params.push(...values);
    // As the index states it: a partial index is used only when the query states its condition.
    if (subset !== undefined) conditions.push(subsetCondition(subset, 'o.'));
    conditions.push(...residualOrderConditions(plan.residual, params));
    conditions.push(...rangeConditions(ORDER_KEY, keyRange, params));
    return { sql: armSql(columns.select, `orders_current AS o${dialect.indexHint(index)}${columns.joins}`, conditions), params };
  });
}

/** The queries of a listOrders call; undefined when the filter can match nothing. */
export function orderQueries(
  dialect: SqlDialect, filter: OrderFilter, page: PageRequest<OrderKey>, stats: OrderStats,
): PageQueries | undefined {
  // A reference no stored order can have: asking the database would only make it refuse the value.
  if (!dialect.textHoldsNul && filter.reference?.includes('\0')) return undefined;
  const scans = planPage(page);
  const plan = planOrderQuery(filter, stats);
  if (plan === undefined) return undefined;
  const arms = (range: KeyRange<OrderKey>, columns: Columns) => orderArms(dialect, plan, range, columns);
  const rows = pageSql(dialect, arms(orderKeyRange(scans.rows, plan.dateRange), ORDER_ROW), scans.rows.direction, scans.rows.limit, ORDER_PAGE);
  if (scans.beyond === undefined) return { rows };
  return { rows, beyond: existsSql(arms(orderKeyRange(scans.beyond, plan.dateRange), ORDER_EXISTS)) };
}

// ---------------------------------------------------------------- bundles

const BUNDLE_KEY: readonly [string, string] = [`b.${BUNDLE_LISTING_KEY[0]}`, `b.${BUNDLE_LISTING_KEY[1]}`];
/** What differs between the signer-added and signer-removed bundles' listings: the table, its indexes, its node. */
const BUNDLE_TABLES: { readonly [T in BundleTable]: { index: { readonly [P in BundlePathName]: string }; json: string } } = {
  signer_added: { index: BUNDLE_INDEX, json: BUNDLE_JSON },
  signer_removed: { index: REMOVED_BUNDLE_INDEX, json: REMOVED_BUNDLE_JSON },
};

function bundleArm(dialect: SqlDialect, table: BundleTable, filter: BundleFilter, range: KeyRange<BundleKey>, select: string): Arm {
  const plan = planBundleQuery(filter);
  const params: SqlValue[] = [];
  const conditions: string[] = [];
  const equal = (d: BundleDimension, value: string | bigint | undefined) => {
    if (value === undefined) return;
    conditions.push(`b.${BUNDLE_COLUMN[d]} = ?`);
    params.push(typeof value === 'bigint' ? u64(value) : value);
  };
  // The path's own column first, so the index's leading column is pinned.
  if (plan.path.dimension !== undefined) equal(plan.path.dimension, plan.value);
  equal('nodeId', plan.residual.nodeId);
  equal('epochSeq', plan.residual.epochSeq);
  equal('submitter', plan.residual.submitter);
  conditions.push(...rangeConditions(BUNDLE_KEY, asColumns(range, (k) => [k.timestamp, k.signatureId]), params));
  const index = BUNDLE_TABLES[table].index[plan.path.name as BundlePathName];
  return { sql: armSql(select, `${table} AS b${dialect.indexHint(index)}`, conditions), params };
}

/** The queries of a bundle listing, of signer-added bundles or of signer-removed ones. */
export function bundleQueries(
  dialect: SqlDialect, filter: BundleFilter, page: PageRequest<BundleKey>, table: BundleTable = 'signer_added',
): PageQueries {
  const scans = planPage(page);
  const row = `${BUNDLE_TABLES[table].json} AS json, ${BUNDLE_KEY[0]} AS k1, ${BUNDLE_KEY[1]} AS k2`;
  const rows = pageSql(dialect, [bundleArm(dialect, table, filter, scanRange(scans.rows), row)], scans.rows.direction, scans.rows.limit);
  if (scans.beyond === undefined) return { rows };
  return { rows, beyond: existsSql([bundleArm(dialect, table, filter, scanRange(scans.beyond), '1')]) };
}
