/**
 * Query parameters -> domain filters and page requests, with the original's
 * value rules. Each parameter is read through its declaration
 * (./parameters.ts), which the OpenAPI document lists. Every refusal is a 400 naming the parameter (as the client
 * spelled it) and the offending value.
 */
import type { BundleFilter } from '../domain/bundle.js';
import { OrderStatus, OrderType, TimeInForce, parseEnum, type EnumTable } from '../domain/enums.js';
import { NETWORK_PARTY, type OrderFilter } from '../domain/order.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type PageRequest } from '../domain/page.js';
import type { CursorCodec } from './cursor.js';
import { InvalidEpochError, InvalidFilterError, InvalidPaginationError, quote, type ParameterRefusal } from './errors.js';
import { BUNDLE_FILTER_PARAMS, ORDER_FILTER_PARAMS, PAGINATION_PARAMS, PRETTY_PARAM, type ParameterDecl } from './parameters.js';
import { DEFAULT_READ_LIMITS, type ReadLimits } from './http-options.js';
import type { QueryParam, QueryParams } from './query.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const SIGNED_DECIMAL = /^[+-]?\d+$/;
const UNSIGNED_DECIMAL = /^\d+$/;
const HEX_ID = /^[0-9a-fA-F]{64}$/;
const ETHEREUM_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

/** Go's strconv.ParseBool, which the original gateway uses. */
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ['true', true], ['TRUE', true], ['True', true], ['t', true], ['T', true], ['1', true],
  ['false', false], ['FALSE', false], ['False', false], ['f', false], ['F', false], ['0', false],
]);

export function parseBoolean(text: string): boolean | undefined {
  return BOOLEANS.get(text);
}

function refuse(kind: ParameterRefusal, param: QueryParam, rule: string): never {
  throw new kind(`${param.key}=${quote(param.value)}: ${rule}`);
}

/** The single value of a non-repeated parameter; given twice is an error, as in the original. */
function single(q: QueryParams, { name }: ParameterDecl, kind: ParameterRefusal): QueryParam | undefined {
  const given = q.all(name);
  if (given.length > 1) {
    const [a, b] = given as [QueryParam, QueryParam];
    throw new kind(`${a.key}=${quote(a.value)} and ${b.key}=${quote(b.value)}: ${name} may be given only once`);
  }
  return given[0];
}

/** What a request may ask for at most, beyond the original's own rules. */
/**
 * Every item of a repeated parameter, from repeated keys and comma-separated
 * values alike; more than `max` of them is refused, naming the parameter.
 */
function items(q: QueryParams, { name }: ParameterDecl, max: number): QueryParam[] {
  const out: QueryParam[] = [];
  for (const param of q.all(name)) {
    if (!param.value.includes(',')) {
      out.push(param);
    } else {
      for (const value of param.value.split(',')) out.push({ key: param.key, value });
    }
    if (out.length > max) {
      throw new InvalidFilterError(`${out[0]!.key}: more than ${max} values, the most one request may give (split it into several)`);
    }
  }
  return out;
}

function unique<T>(values: T[]): T[] {
  return values.length < 2 ? values : [...new Set(values)];
}

function readBoolean(q: QueryParams, name: ParameterDecl, kind: ParameterRefusal): boolean | undefined {
  const param = single(q, name, kind);
  if (param === undefined) return undefined;
  const value = parseBoolean(param.value);
  if (value === undefined) refuse(kind, param, 'not a boolean (true/false, 1/0, t/f)');
  return value;
}

function readPageSize(q: QueryParams, name: ParameterDecl): number | undefined {
  const param = single(q, name, InvalidPaginationError);
  if (param === undefined) return undefined;
  const size = SIGNED_DECIMAL.test(param.value) ? Number(param.value) : NaN;
  if (!(size >= 1 && size <= MAX_PAGE_SIZE)) {
    refuse(InvalidPaginationError, param, `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return size;
}

/** A cursor parameter; an empty value counts as absent, so scripts can pass an empty "previous cursor". */
function readCursorParam(q: QueryParams, name: ParameterDecl): QueryParam | undefined {
  const param = single(q, name, InvalidPaginationError);
  return param === undefined || param.value === '' ? undefined : param;
}

function conflict(a: QueryParam, b: QueryParam): never {
  throw new InvalidPaginationError(`${a.key}=${quote(a.value)} and ${b.key}=${quote(b.value)} cannot be used together`);
}

/**
 * pagination.*: `first` pages forward after `after`, `last` backward before
 * `before`; a cursor alone implies its direction with the default size.
 */
export function readPagination<K>(q: QueryParams, cursors: CursorCodec<K>): PageRequest<K> {
  const P = PAGINATION_PARAMS;
  const firstParam = single(q, P.first, InvalidPaginationError);
  const lastParam = single(q, P.last, InvalidPaginationError);
  const after = readCursorParam(q, P.after);
  const before = readCursorParam(q, P.before);
  if (firstParam && lastParam) conflict(firstParam, lastParam);
  if (after && before) conflict(after, before);
  if (firstParam && before) conflict(firstParam, before);
  if (lastParam && after) conflict(lastParam, after);

  const first = readPageSize(q, P.first);
  const last = readPageSize(q, P.last);
  const newestFirst = readBoolean(q, P.newestFirst, InvalidPaginationError) ?? P.newestFirst.default;
  const backward = last !== undefined || before !== undefined;
  const cursorParam = backward ? before : after;

  const page: PageRequest<K> = {
    newestFirst,
    mode: backward ? 'last' : 'first',
    limit: (backward ? last : first) ?? DEFAULT_PAGE_SIZE,
  };
  if (cursorParam !== undefined) {
    const cursor = cursors.decode(cursorParam.value);
    if (cursor === undefined) refuse(InvalidPaginationError, cursorParam, 'not a cursor of this listing');
    page.cursor = cursor;
  }
  return page;
}

function readEnums(q: QueryParams, name: ParameterDecl, table: EnumTable, max: number): number[] | undefined {
  const given = items(q, name, max);
  if (given.length === 0) return undefined;
  return unique(given.map((param) => {
    const value = parseEnum(table, param.value);
    if (value === undefined) refuse(InvalidFilterError, param, `not a ${table.typeName} name or number`);
    return value;
  }));
}

function readIds(q: QueryParams, name: ParameterDecl, what: string, allowNetwork: boolean, max: number): string[] | undefined {
  const given = items(q, name, max);
  if (given.length === 0) return undefined;
  return unique(given.map((param) => {
    if (allowNetwork && param.value === NETWORK_PARTY) return NETWORK_PARTY;
    if (!HEX_ID.test(param.value)) {
      refuse(InvalidFilterError, param, `not a ${what} (64 hex characters${allowNetwork ? ` or "${NETWORK_PARTY}"` : ''})`);
    }
    return param.value.toLowerCase();
  }));
}

function readTimestamp(q: QueryParams, name: ParameterDecl): { param: QueryParam; value: bigint } | undefined {
  const param = single(q, name, InvalidFilterError);
  if (param === undefined) return undefined;
  const value = SIGNED_DECIMAL.test(param.value) ? BigInt(param.value) : undefined;
  if (value === undefined || value < INT64_MIN || value > INT64_MAX) {
    refuse(InvalidFilterError, param, 'not an int64 Unix time in nanoseconds');
  }
  return { param, value };
}

export function readOrderFilter(q: QueryParams, limits: ReadLimits = DEFAULT_READ_LIMITS): OrderFilter {
  const max = limits.maxListValues;
  const F = ORDER_FILTER_PARAMS;
  const filter: OrderFilter = {};
  const statuses = readEnums(q, F.statuses, OrderStatus, max);
  if (statuses) filter.statuses = statuses;
  const types = readEnums(q, F.types, OrderType, max);
  if (types) filter.types = types;
  const timeInForces = readEnums(q, F.timeInForces, TimeInForce, max);
  if (timeInForces) filter.timeInForces = timeInForces;
  if (readBoolean(q, F.excludeLiquidity, InvalidFilterError)) filter.excludeLiquidity = true;
  const partyIds = readIds(q, F.partyIds, 'party id', true, max);
  if (partyIds) filter.partyIds = partyIds;
  const marketIds = readIds(q, F.marketIds, 'market id', false, max);
  if (marketIds) filter.marketIds = marketIds;
  // The original's reference is an optional string: present but empty matches orders without one.
  const reference = single(q, F.reference, InvalidFilterError);
  if (reference) filter.reference = reference.value;

  const start = readTimestamp(q, F.startTimestamp);
  const end = readTimestamp(q, F.endTimestamp);
  if (start && end && start.value > end.value) {
    throw new InvalidFilterError(`${start.param.key}=${quote(start.param.value)} is after ${end.param.key}=${quote(end.param.value)}`);
  }
  if (start || end) {
    filter.dateRange = {};
    if (start) filter.dateRange.start = start.value;
    if (end) filter.dateRange.end = end.value;
  }
  if (readBoolean(q, F.liveOnly, InvalidFilterError)) filter.liveOnly = true;
  return filter;
}

/** The bundle filters are plain strings in the original: empty means "no filter". */
function nonEmpty(q: QueryParams, name: ParameterDecl, kind: ParameterRefusal): QueryParam | undefined {
  const param = single(q, name, kind);
  return param === undefined || param.value === '' ? undefined : param;
}

export function readBundleFilter(q: QueryParams): BundleFilter {
  const filter: BundleFilter = {};
  const F = BUNDLE_FILTER_PARAMS;
  const nodeId = nonEmpty(q, F.nodeId, InvalidFilterError);
  if (nodeId) {
    if (!HEX_ID.test(nodeId.value)) refuse(InvalidFilterError, nodeId, 'not a node id (64 hex characters)');
    filter.nodeId = nodeId.value.toLowerCase();
  }
  const submitter = nonEmpty(q, F.submitter, InvalidFilterError);
  if (submitter) {
    if (!ETHEREUM_ADDRESS.test(submitter.value)) {
      refuse(InvalidFilterError, submitter, 'not an Ethereum address (0x and 40 hex characters)');
    }
    filter.submitter = submitter.value.toLowerCase();
  }
  const epochSeq = nonEmpty(q, F.epochSeq, InvalidEpochError);
  if (epochSeq) {
    const value = UNSIGNED_DECIMAL.test(epochSeq.value) ? BigInt(epochSeq.value) : undefined;
    if (value === undefined || value > UINT64_MAX) refuse(InvalidEpochError, epochSeq, 'not a base-10 unsigned 64-bit integer');
    filter.epochSeq = value;
  }
  return filter;
}

/** `?pretty`, with any value or none, asks for indented JSON. */
export function wantsPretty(q: QueryParams): boolean {
  return q.has(PRETTY_PARAM.name);
}
