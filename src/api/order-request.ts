/**
 * The order id and version of GET /api/v2/order/{orderId} and
 * /api/v2/order/versions/{orderId}, read as the original reads them: the
 * gateway parses `version` (an int32) first, then the handler checks the id
 * (empty, then 64 hex characters) and the version (more than 0), each with
 * its own refusal (docs/compatibility.md, section 12).
 */
import { isOrderId } from '../domain/order.js';
import {
  OrderIdInvalidError, OrderIdMissingError, OrderVersionInvalidError, RouteNotFoundError, UnparsableFieldError,
} from './errors.js';
import { ORDER_VERSION_PARAM, protoName, type ParameterDecl } from './parameters.js';
import { wantsPretty } from './read-parameters.js';
import { readQuery, pathOf, type QueryParams } from './query.js';

export const ORDER_PREFIX = '/api/v2/order/';
export const VERSIONS_PREFIX = '/api/v2/order/versions/';

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;

/** Go's strconv.ParseInt(s, 10, 32), as the gateway reports its failure. */
function parseInt32(field: string, text: string): bigint {
  if (!/^[+-]?\d+$/.test(text)) throw new UnparsableFieldError(`parsing field "${field}": strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  const value = BigInt(text);
  if (value < INT32_MIN || value > INT32_MAX) {
    throw new UnparsableFieldError(`parsing field "${field}": strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`);
  }
  return value;
}

/** The single value of a scalar field (the gateway names it by its proto name); the gateway refuses one given twice. */
function scalar(q: QueryParams, decl: ParameterDecl): string | undefined {
  const given = q.all(decl.name);
  if (given.length > 1) {
    throw new UnparsableFieldError(`too many values for field "${protoName(decl.name)}": ${given.map((p) => p.value).join(', ')}`);
  }
  return given[0]?.value;
}

/**
 * The id in the path after `prefix`, lower case. (The original's gateway lets
 * a query key `orderId` replace it; here the path wins: docs/compatibility.md,
 * section 12.1.) A path with more segments is no route of this endpoint.
 */
export function readOrderId(path: string, prefix: string): string {
  const rest = path.slice(prefix.length);
  if (rest.includes('/')) throw new RouteNotFoundError('Not Found');
  let id: string;
  try {
    id = decodeURIComponent(rest);
  } catch (e) {
    if (e instanceof URIError) throw new OrderIdInvalidError('');
    throw e;
  }
  if (id === '') throw new OrderIdMissingError('');
  if (!isOrderId(id)) throw new OrderIdInvalidError('');
  return id.toLowerCase();
}

/** GET /order/{id}'s request: the id, and the version asked for. */
export function readOrderRequest(path: string, q: QueryParams): { id: string; version?: bigint } {
  const versionText = scalar(q, ORDER_VERSION_PARAM);
  const version = versionText === undefined ? undefined : parseInt32(protoName(ORDER_VERSION_PARAM.name), versionText);
  const id = readOrderId(path, ORDER_PREFIX);
  if (version !== undefined && version <= 0n) throw new OrderVersionInvalidError('');
  return version === undefined ? { id } : { id, version };
}

/** GET /order/{id}'s URL read as the route reads it (../order-route.ts), and as the OpenAPI document declares it. */
export function readOrderUrl(url: string): { id: string; version?: bigint; pretty: boolean; query: QueryParams } {
  const query = readQuery(url);
  return { ...readOrderRequest(pathOf(url), query), pretty: wantsPretty(query), query };
}
