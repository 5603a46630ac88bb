/**
 * What a request to GET /api/v2/stream/orders asks for, read as the
 * original's gateway reads it: `marketIds` and `partyIds` repeated once per
 * id (snake_case too), `excludeLiquidity` a Go boolean, and our `fromBlock`
 * extension; with the original's refusals (docs/compatibility.md, section 12.4).
 */
import { NETWORK_PARTY } from '../../domain/order.js';
import { parseBoolean } from '../params.js';
import { readQuery, type QueryParams } from '../query.js';
import type { StreamFilter } from './hub.js';

export const STREAM_ORDERS_PATH = '/api/v2/stream/orders';

/** A refusal of a stream request: its gRPC code, HTTP status and error body, as the original writes them. */
export class StreamRefusal {
  constructor(readonly status: number, readonly body: string) {}
}

const HEX_ID = /^[0-9a-fA-F]{64}$/;
const ERROR_DETAIL_TYPE = 'type.googleapis.com/vega.ErrorDetail';

/** The data node's refusal of an id: code 3, detail 10000 "invalid party id" whatever the id's kind. */
function invalidId(kind: 'market' | 'party'): StreamRefusal {
  const detail = { '@type': ERROR_DETAIL_TYPE, code: 10000, message: 'invalid party id', inner: `one or more ${kind} id is invalid` };
  return new StreamRefusal(400, JSON.stringify({ error: { code: 3, message: 'InvalidArgument error', details: [detail] } }));
}

/** The gateway's own refusal of a value it cannot parse: a bare status, no Vega detail. */
function unparsable(field: string, message: string): StreamRefusal {
  return new StreamRefusal(400, JSON.stringify({ code: 3, message: `parsing field "${field}": ${message}` }));
}

export interface StreamRequest {
  filter: StreamFilter;
  /** Our extension: resume after this block, without a snapshot. */
  fromBlock?: bigint;
}

function ids(q: QueryParams, name: string, kind: 'market' | 'party'): string[] {
  const values = q.all(name).map((p) => p.value);
  for (const id of values) if (!HEX_ID.test(id) && !(kind === 'party' && id === NETWORK_PARTY)) throw invalidId(kind);
  return values;
}

/** Reads a stream request's URL; throws StreamRefusal for what the original refuses. */
export function readStreamRequest(url: string): StreamRequest {
  const q = readQuery(url);
  const excludeParams = q.all('excludeLiquidity');
  if (excludeParams.length > 1) {
    throw new StreamRefusal(400, JSON.stringify({
      code: 3, message: `too many values for field "exclude_liquidity": ${excludeParams.map((p) => p.value).join(', ')}`,
    }));
  }
  let excludeLiquidity = false;
  const given = excludeParams[0];
  if (given !== undefined) {
    const value = parseBoolean(given.value);
    if (value === undefined) throw unparsable('exclude_liquidity', `strconv.ParseBool: parsing ${JSON.stringify(given.value)}: invalid syntax`);
    excludeLiquidity = value;
  }
  const request: StreamRequest = {
    filter: { marketIds: ids(q, 'marketIds', 'market'), partyIds: ids(q, 'partyIds', 'party'), excludeLiquidity },
  };
  const from = q.all('fromBlock').at(-1);
  if (from !== undefined) {
    if (!/^\d{1,20}$/.test(from.value)) throw unparsable('fromBlock', `not a block height: ${JSON.stringify(from.value)}`);
    request.fromBlock = BigInt(from.value);
  }
  return request;
}
