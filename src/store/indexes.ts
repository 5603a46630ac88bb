/**
 * The indexes that listings and the reads of one order's history read,
 * declared once for both backends: the
 * planner's access paths (./plan.ts), the index names and pinned columns of
 * the page SQL (./page-sql.ts) and the CREATE INDEX statement of each index
 * all come from these tables. Both schemas build the same indexes under the
 * same names; the tests compare each store's live indexes with them.
 * Released migrations keep their own literal statements: they are what
 * existing stores were built with, so a change here needs a new migration.
 */

/** What a filter may pin an order index's leading column to, named as the filter names it. */
export type OrderDimension = 'reference' | 'partyId' | 'marketId' | 'status' | 'type' | 'timeInForce';

/** The column of orders_current that holds each dimension: parties and markets by their interned number. */
export const ORDER_COLUMN = {
  reference: 'reference',
  partyId: 'party_no',
  marketId: 'market_no',
  status: 'status',
  type: 'type',
  timeInForce: 'time_in_force',
} as const satisfies Record<OrderDimension, string>;

export type OrderColumn = (typeof ORDER_COLUMN)[OrderDimension];

/** The listing key of orders, which every order index ends in (./order-key.ts). */
export const ORDER_LISTING_KEY = ['created_at', 'id_key'] as const;

/** The rows a partial order index keeps, as a column and its test. */
const SUBSETS = {
  live: ['live', '= 1'],
  // Most orders carry no reference; filtering on the empty one is no lookup by reference.
  referenced: ['reference', "<> ''"],
} as const satisfies Record<string, readonly [column: string, test: string]>;

export type OrderSubset = keyof typeof SUBSETS;

/**
 * The condition of a partial index, its column prefixed by `qualifier` (`o.`,
 * say): a query must state it too for the index to serve the query.
 */
export function subsetCondition(subset: OrderSubset, qualifier = ''): string {
  const [column, test] = SUBSETS[subset];
  return `${qualifier}${column} ${test}`;
}

/** An index as a CREATE INDEX statement states it. */
export interface IndexDefinition {
  /** The index's name, the same in both schemas. */
  readonly name: string;
  readonly table: string;
  /** Every column in order, the listing key last. */
  readonly columns: readonly string[];
  /** The condition of a partial index, columns unqualified. */
  readonly where?: string;
  /** A UNIQUE index. */
  readonly unique?: boolean;
}

/** An index of the current orders, with what the planner knows of it. */
export interface OrderIndex extends IndexDefinition {
  /** The planner's stable name for the index (./plan.ts). */
  readonly path: string;
  readonly table: 'orders_current';
  readonly dimensions: readonly OrderDimension[];
  /** The columns before the listing key, one per dimension. */
  readonly leading: readonly OrderColumn[];
  readonly subset?: OrderSubset;
  /** The index holds live orders only, so it serves liveOnly queries alone. */
  readonly liveOnly: boolean;
  /** The index holds orders with a non-empty reference only. */
  readonly referencedOnly: boolean;
}

interface OrderIndexDeclaration {
  name: string;
  dimensions: OrderDimension[];
  subset?: OrderSubset;
}

/** The same record with `f` applied to each value, in the same key order. */
export function mapValues<K extends string, V, W>(record: Readonly<Record<K, V>>, f: (value: V, key: K) => W): Record<K, W> {
  return Object.fromEntries(Object.entries<V>(record).map(([k, v]) => [k, f(v, k as K)])) as Record<K, W>;
}

function orderIndexes<P extends string>(declared: Record<P, OrderIndexDeclaration>): { readonly [K in P]: OrderIndex } {
  return mapValues(declared, ({ name, dimensions, subset }, path): OrderIndex => {
    const leading = dimensions.map((d) => ORDER_COLUMN[d]);
    const index: OrderIndex = {
      path, name, table: 'orders_current', dimensions, leading, columns: [...leading, ...ORDER_LISTING_KEY],
      liveOnly: subset === 'live', referencedOnly: subset === 'referenced',
    };
    return subset === undefined ? index : { ...index, subset, where: subsetCondition(subset) };
  });
}

/**
 * Every order index the planner may choose, keyed by its path name. Their
 * order is the planner's order of preference between paths of equal cost.
 * Live orders are few next to all the orders ever placed: partial indexes stay small.
 */
export const ORDER_INDEXES = orderIndexes({
  time: { name: 'orders_by_time', dimensions: [] },
  live: { name: 'orders_live_by_time', dimensions: [], subset: 'live' },
  reference: { name: 'orders_by_reference', dimensions: ['reference'], subset: 'referenced' },
  party: { name: 'orders_by_party', dimensions: ['partyId'] },
  liveParty: { name: 'orders_live_by_party', dimensions: ['partyId'], subset: 'live' },
  market: { name: 'orders_by_market', dimensions: ['marketId'] },
  liveMarket: { name: 'orders_live_by_market', dimensions: ['marketId'], subset: 'live' },
  status: { name: 'orders_by_status', dimensions: ['status'] },
  type: { name: 'orders_by_type', dimensions: ['type'] },
  timeInForce: { name: 'orders_by_time_in_force', dimensions: ['timeInForce'] },
});

export type OrderPathName = keyof typeof ORDER_INDEXES;

// ---------------------------------------------------------------- bundles

/** What a bundle filter may pin an index's leading column to. */
export type BundleDimension = 'nodeId' | 'epochSeq' | 'submitter';

/** The column of signer_added (and of signer_removed: the same names) that holds each dimension. */
export const BUNDLE_COLUMN = {
  nodeId: 'validator_id',
  epochSeq: 'epoch_seq',
  submitter: 'submitter',
} as const satisfies Record<BundleDimension, string>;

/** The listing key of bundles, which every bundle index ends in. */
export const BUNDLE_LISTING_KEY = ['timestamp', 'signature_id'] as const;

/** The tables of bundles: signer-added and signer-removed ones, listed alike. */
export type BundleTable = 'signer_added' | 'signer_removed';

/** An index of a bundle table: the listing key, after one pinned column or none. */
export interface BundleIndex<T extends BundleTable = 'signer_added'> extends IndexDefinition {
  readonly path: string;
  readonly table: T;
  readonly dimension?: BundleDimension;
}

function bundleIndexes<T extends BundleTable, P extends string>(
  table: T,
  declared: Record<P, { name: string; dimension?: BundleDimension }>,
): { readonly [K in P]: BundleIndex<T> } {
  return mapValues(declared, ({ name, dimension }, path): BundleIndex<T> => {
    if (dimension === undefined) return { path, name, table, columns: [...BUNDLE_LISTING_KEY] };
    return { path, name, table, dimension, columns: [BUNDLE_COLUMN[dimension], ...BUNDLE_LISTING_KEY] };
  });
}

/** Every signer-added bundle index the planner may choose, keyed by its path name. */
export const BUNDLE_INDEXES = bundleIndexes('signer_added', {
  time: { name: 'signer_added_by_time' },
  nodeId: { name: 'signer_added_by_validator', dimension: 'nodeId' },
  epochSeq: { name: 'signer_added_by_epoch', dimension: 'epochSeq' },
  submitter: { name: 'signer_added_by_submitter', dimension: 'submitter' },
});

export type BundlePathName = keyof typeof BUNDLE_INDEXES;

/**
 * The signer-removed bundles' indexes, path for path the added ones'
 * (the embedded store's schema 7, PostgreSQL's migration 4): the removed list
 * reads as the added one does.
 */
export const REMOVED_BUNDLE_INDEXES: { readonly [P in BundlePathName]: BundleIndex<'signer_removed'> } = bundleIndexes('signer_removed', {
  time: { name: 'signer_removed_by_time' },
  nodeId: { name: 'signer_removed_by_validator', dimension: 'nodeId' },
  epochSeq: { name: 'signer_removed_by_epoch', dimension: 'epochSeq' },
  submitter: { name: 'signer_removed_by_submitter', dimension: 'submitter' },
});

// ---------------------------------------------------------------- order history

/**
 * The index of orders_history that the reads of one order use: its rows by
 * (order, version, height), each once. The table's own key is (height, seq),
 * the order of the blocks' rows. PostgreSQL names the order by its id; the
 * embedded store by its number (./sqlite/order-numbers.ts), so that the
 * entries a prune deletes sit together.
 */
export const HISTORY_BY_ORDER_INDEX: IndexDefinition = {
  name: 'orders_history_by_order',
  table: 'orders_history',
  columns: ['id_bytes', 'version', 'height'],
  unique: true,
};

/** HISTORY_BY_ORDER_INDEX as the embedded store keeps it. */
export const HISTORY_BY_ORDER_NUMBER_INDEX: IndexDefinition = { ...HISTORY_BY_ORDER_INDEX, columns: ['order_no', 'version', 'height'] };

/** The statement that creates `index`, in the SQL both SQLite and PostgreSQL take. */
export function createIndexSql(index: IndexDefinition): string {
  return `CREATE ${index.unique === true ? 'UNIQUE ' : ''}INDEX ${index.name} ON ${index.table} (${index.columns.join(', ')})${index.where === undefined ? '' : ` WHERE ${index.where}`}`;
}
