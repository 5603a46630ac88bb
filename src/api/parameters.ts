/**
 * The parameters each route reads, declared once: the readers (./read-parameters.ts)
 * read a parameter through its declaration, and the OpenAPI document
 * (./openapi/document.ts) lists every declared parameter of a route, in both
 * of the spellings the original accepts. A parameter added here to a route's
 * list is in the document with no other edit; test/api/openapi.test.ts checks
 * that each route's reader asks for exactly the parameters its route declares.
 */
import { OrderStatus, OrderType, TimeInForce, type EnumTable } from '../domain/enums.js';
import { NETWORK_PARTY } from '../domain/order.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../domain/page.js';

/** A JSON Schema (2020-12, as OpenAPI 3.1 takes it), as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

export interface ParameterDecl {
  /** The JSON name, dotted lowerCamel (`filter.partyIds`); the proto name (`filter.party_ids`) follows from it. */
  readonly name: string;
  readonly in: 'query' | 'path';
  /** One value's schema (of each item, for a list). */
  readonly schema: JsonSchema;
  /** Repeatable: the key given again and again, and where said so, values separated by commas too. */
  readonly list?: 'repeat' | 'repeat-or-commas';
  readonly required?: boolean;
  /** The value assumed when the parameter is absent, for the document (the reader applies it). */
  readonly default?: unknown;
  readonly description: string;
}

/** The original's gateway reads a query key in its proto name (snake_case) or its JSON name (lowerCamel). */
export function protoName(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

const HEX_ID = '^[0-9a-fA-F]{64}$';

/** Every name of an enum table, in number order, for a schema. */
export function enumNames(table: EnumTable): string[] {
  return table.names.filter((name): name is string => name !== undefined);
}

const enumParam = (name: string, table: EnumTable, what: string): ParameterDecl => ({
  name, in: 'query', list: 'repeat-or-commas',
  schema: { type: 'string', enum: enumNames(table) },
  description: `Only orders of these ${what} (${table.typeName}): names, or their numbers (\`1\`); repeat the key or separate values by commas.`,
});

/** pagination.*: read by readPagination for every paged listing. */
export const PAGINATION_PARAMS = {
  first: {
    name: 'pagination.first', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
    description: `A page forward: this many rows (1..${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when no size is given), after \`pagination.after\` if given. Not with \`pagination.last\` or \`pagination.before\`.`,
  },
  after: {
    name: 'pagination.after', in: 'query', schema: { type: 'string' },
    description: 'The cursor of the row the page starts after: a previous page\'s `pageInfo.endCursor`. Empty: no cursor.',
  },
  last: {
    name: 'pagination.last', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
    description: `A page backward: this many rows (1..${MAX_PAGE_SIZE}) before \`pagination.before\` if given, in the same order as a forward page.`,
  },
  before: {
    name: 'pagination.before', in: 'query', schema: { type: 'string' },
    description: 'The cursor of the row the page ends before: a page\'s `pageInfo.startCursor`. Empty: no cursor.',
  },
  newestFirst: {
    name: 'pagination.newestFirst', in: 'query', schema: { type: 'boolean' }, default: true,
    description: 'Newest first (the default), or oldest first: exactly the reverse order. Go booleans: true/false, 1/0, t/f.',
  },
} as const satisfies Record<string, ParameterDecl>;

/** The filters of GET /api/v2/orders, read by readOrderFilter. */
export const ORDER_FILTER_PARAMS = {
  statuses: enumParam('filter.statuses', OrderStatus, 'statuses'),
  types: enumParam('filter.types', OrderType, 'types'),
  timeInForces: enumParam('filter.timeInForces', TimeInForce, 'times in force'),
  excludeLiquidity: {
    name: 'filter.excludeLiquidity', in: 'query', schema: { type: 'boolean' },
    description: 'Leave out liquidity provision orders.',
  },
  partyIds: {
    name: 'filter.partyIds', in: 'query', list: 'repeat-or-commas',
    schema: { type: 'string', pattern: `^([0-9a-fA-F]{64}|${NETWORK_PARTY})$` },
    description: `Only orders of these parties: 64 hex characters, either case, or \`${NETWORK_PARTY}\`.`,
  },
  marketIds: {
    name: 'filter.marketIds', in: 'query', list: 'repeat-or-commas', schema: { type: 'string', pattern: HEX_ID },
    description: 'Only orders on these markets: 64 hex characters, either case.',
  },
  reference: {
    name: 'filter.reference', in: 'query', schema: { type: 'string' },
    description: 'Only orders with exactly this client reference (given but empty: orders without one).',
  },
  startTimestamp: {
    name: 'filter.dateRange.startTimestamp', in: 'query', schema: { type: 'string', pattern: '^[+-]?[0-9]+$' },
    description: 'Only orders created at or after this time: Unix nanoseconds (int64, as a decimal string), rounded down to the microsecond.',
  },
  endTimestamp: {
    name: 'filter.dateRange.endTimestamp', in: 'query', schema: { type: 'string', pattern: '^[+-]?[0-9]+$' },
    description: 'Only orders created before this time: Unix nanoseconds (int64, as a decimal string), rounded down to the microsecond.',
  },
  liveOnly: {
    name: 'filter.liveOnly', in: 'query', schema: { type: 'boolean' },
    description: 'Only orders on the book: ACTIVE or PARKED, LIMIT, neither IOC nor FOK.',
  },
} as const satisfies Record<string, ParameterDecl>;

/** The filters of the signer bundle listings, read by readBundleFilter; empty means no filter, as in the original. */
export const BUNDLE_FILTER_PARAMS = {
  nodeId: {
    name: 'nodeId', in: 'query', schema: { type: 'string', pattern: '^([0-9a-fA-F]{64})?$' },
    description: 'Only bundles of this validator: its node id, 64 hex characters, either case.',
  },
  submitter: {
    name: 'submitter', in: 'query', schema: { type: 'string', pattern: '^(0[xX][0-9a-fA-F]{40})?$' },
    description: 'Only bundles of this submitter: an Ethereum address, `0x` and 40 hex characters, either case.',
  },
  epochSeq: {
    name: 'epochSeq', in: 'query', schema: { type: 'string', pattern: '^[0-9]*$' },
    description: 'Only bundles of this epoch: a base-10 unsigned 64-bit integer.',
  },
} as const satisfies Record<string, ParameterDecl>;

/** `?pretty`, read by wantsPretty: any value, or none. */
export const PRETTY_PARAM: ParameterDecl = {
  name: 'pretty', in: 'query', schema: { type: 'string' },
  description: 'Present, with any value or none: the JSON comes indented.',
};

/** GET /api/v2/order/{orderId} and /api/v2/order/versions/{orderId}: the order, in the path. */
export const ORDER_ID_PARAM: ParameterDecl = {
  name: 'orderId', in: 'path', schema: { type: 'string', pattern: HEX_ID },
  description: 'The order id: 64 hex characters, either case.',
};

/** GET /api/v2/order/{orderId}: which version of the order (an int32 of the original's gateway). */
export const ORDER_VERSION_PARAM: ParameterDecl = {
  name: 'version', in: 'query', schema: { type: 'integer', format: 'int32', minimum: 1 },
  description: 'The order as it was at this version (1: as created; each amendment adds one); absent: its current state.',
};

/** GET /api/v2/stream/orders: what the stream carries, as the original's gateway reads it (each id its own key). */
export const STREAM_ORDERS_PARAMS = {
  marketIds: {
    name: 'marketIds', in: 'query', list: 'repeat', schema: { type: 'string', pattern: HEX_ID },
    description: 'Only orders on these markets: 64 hex characters.',
  },
  partyIds: {
    name: 'partyIds', in: 'query', list: 'repeat', schema: { type: 'string', pattern: `^([0-9a-fA-F]{64}|${NETWORK_PARTY})$` },
    description: `Only orders of these parties: 64 hex characters, or \`${NETWORK_PARTY}\`.`,
  },
  excludeLiquidity: {
    name: 'excludeLiquidity', in: 'query', schema: { type: 'boolean' },
    description: 'Leave liquidity provision orders out of the snapshot.',
  },
  fromBlock: {
    name: 'fromBlock', in: 'query', schema: { type: 'string', pattern: '^[0-9]{1,20}$' },
    description: 'Ours, not the original\'s: no snapshot; the changes of every block after this height, then live ones.',
  },
} as const satisfies Record<string, ParameterDecl>;
