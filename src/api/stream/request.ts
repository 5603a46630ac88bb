/**
 * What a request to GET /api/v2/stream/orders asks for, read as the
 * original's gateway reads it: `marketIds` and `partyIds` repeated once per
 * id (snake_case too), `excludeLiquidity` a Go boolean, and our `fromBlock`
 * extension; with the original's refusals (docs/compatibility.md, section 12.4).
 */
import type { StreamFilter } from '../../domain/order-stream.js';
import { NETWORK_PARTY } from '../../domain/order.js';
import { StreamIdInvalidError, UnparsableFieldError } from '../errors.js';
import { protoName, STREAM_ORDERS_PARAMS, type ParameterDecl } from '../parameters.js';
import { parseBoolean } from '../read-parameters.js';
import { readQuery, type QueryParams } from '../query.js';

export const STREAM_ORDERS_PATH = '/api/v2/stream/orders';

const HEX_ID = /^[0-9a-fA-F]{64}$/;

export interface StreamRequest {
  filter: StreamFilter;
  /** Our extension: resume after this block, without a snapshot. */
  fromBlock?: bigint;
}

function ids(q: QueryParams, decl: ParameterDecl, kind: 'market' | 'party'): string[] {
  const values = q.all(decl.name).map((p) => p.value);
  for (const id of values) {
    if (!HEX_ID.test(id) && !(kind === 'party' && id === NETWORK_PARTY)) throw new StreamIdInvalidError(`one or more ${kind} id is invalid`);
  }
  return values;
}

/** The one value of a scalar field (the gateway names it by its proto name); the gateway refuses it given twice. */
function scalar(q: QueryParams, decl: ParameterDecl): string | undefined {
  const given = q.all(decl.name);
  if (given.length > 1) {
    throw new UnparsableFieldError(`too many values for field "${protoName(decl.name)}": ${given.map((p) => p.value).join(', ')}`);
  }
  return given[0]?.value;
}

/**
 * Reads a stream request's URL, each parameter through its declaration (the
 * OpenAPI document's); throws an ApiError for what the original refuses.
 */
export function readStreamRequest(url: string): StreamRequest {
  const P = STREAM_ORDERS_PARAMS;
  const q = readQuery(url);
  const exclude = scalar(q, P.excludeLiquidity);
  const excludeLiquidity = exclude === undefined ? false : parseBoolean(exclude);
  if (excludeLiquidity === undefined) {
    throw new UnparsableFieldError(`parsing field "exclude_liquidity": strconv.ParseBool: parsing ${JSON.stringify(exclude)}: invalid syntax`);
  }
  const request: StreamRequest = {
    filter: { marketIds: ids(q, P.marketIds, 'market'), partyIds: ids(q, P.partyIds, 'party'), excludeLiquidity },
  };
  const from = scalar(q, P.fromBlock);
  if (from !== undefined) {
    if (!/^\d{1,20}$/.test(from) || BigInt(from) >= 2n ** 64n) {
      throw new UnparsableFieldError(`parsing field "from_block": not a block height: ${JSON.stringify(from)}`);
    }
    request.fromBlock = BigInt(from);
  }
  return request;
}
