/**
 * Random HTTP requests for the API's endpoints, and what every answer must
 * be. A request is a path (almost always an endpoint's own), a query of
 * random pairs and a few headers. Keys are the endpoint's parameters in any
 * spelling, another endpoint's, or anything; values are what the parameter
 * means (ids, enum names, cursors the store issued) or what it must survive
 * (huge and negative numbers, unicode, NUL, injection strings, foreign and
 * garbled cursors); each key and value is written %-escaped, with `+`, raw
 * (unicode as UTF-8 bytes on the wire) or with a broken escape.
 */
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { httpStatusOf, type GrpcCode } from '../../src/api/errors.js';
import { OrderStatus, OrderType, TimeInForce, type EnumTable } from '../../src/domain/enums.js';
import { position } from './mutations.js';

/**
 * A served endpoint: its path (`{orderId}` in it stands for an order id, one
 * the store holds or not, or none), the parameters it reads (canonical names)
 * and, for a paged one, its connection's field.
 */
export interface FuzzEndpoint {
  path: string;
  params: readonly string[];
  connection?: string;
}

export const PAGINATION = ['pagination.first', 'pagination.last', 'pagination.after', 'pagination.before', 'pagination.newestFirst'] as const;
const ORDER_FILTERS = [
  'filter.statuses', 'filter.types', 'filter.timeInForces', 'filter.partyIds', 'filter.marketIds', 'filter.reference',
  'filter.dateRange.startTimestamp', 'filter.dateRange.endTimestamp', 'filter.liveOnly', 'filter.excludeLiquidity',
] as const;

/** Every endpoint the server answers: adding one to the API is adding its line here. */
export const ENDPOINTS: readonly FuzzEndpoint[] = [
  { path: '/api/v2/orders', connection: 'orders', params: [...ORDER_FILTERS, ...PAGINATION, 'pretty'] },
  { path: '/api/v2/erc20/multisigcontrol/signer/added/bundles', connection: 'bundles', params: ['nodeId', 'submitter', 'epochSeq', ...PAGINATION, 'pretty'] },
  { path: '/api/v2/erc20/multisigcontrol/signer/removed/bundles', params: ['nodeId', 'submitter', 'epochSeq', ...PAGINATION, 'pretty'] },
  { path: '/api/v2/order/{orderId}', params: ['version', 'pretty'] },
  { path: '/api/v2/order/versions/{orderId}', params: [...PAGINATION, 'pretty'] },
  { path: '/health', params: ['pretty'] },
  { path: '/api/v2/ingest/status', params: ['pretty'] },
];

/** Values the store holds, read through the API before fuzzing, so that many requests ask for something that is there. */
export interface Pools {
  orderIds: string[];
  partyIds: string[];
  marketIds: string[];
  references: string[];
  /** createdAt and bundle timestamps, in ns. */
  times: string[];
  nodeIds: string[];
  submitters: string[];
  epochSeqs: string[];
  /** Cursors issued, by connection field. */
  cursors: Record<string, string[]>;
  etags: string[];
}

/** What any parameter must survive. */
export const HOSTILE: readonly string[] = [
  '', ' ', '\0', 'a\0b', '\u0001\u001f\u007f', '\r\n', '\t', 'é', '日本語', '🚀', '\u202e', '\ufeff', 'e\u0301', '\ud800', '\udfff\ud800',
  "' OR '1'='1", "1; DROP TABLE orders; --", '" OR ""="', "') UNION SELECT * FROM blocks --", "'; SELECT pg_sleep(10); --",
  '\\', "\\'", '$1', '?', '%', ':p', '@p', '{"$gt":""}', '{"a":1}', '[1,2]', 'null', 'true', 'undefined', 'NaN', 'Infinity',
  '-Infinity', '__proto__', 'constructor', 'hasOwnProperty', '../../../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '/api/v2/orders',
  'file:///etc/passwd', '<script>alert(1)</script>', '${jndi:ldap://x/a}', '{{7*7}}', '%s%s%s%n',
  '-1', '0', '-0', '+0', '00', '1e3', '1.5', '0x10', '0b1', '1_000', ' 1', '1 ', '\u0661', '１',
  '9'.repeat(30), `-${'9'.repeat(30)}`, '9'.repeat(400), '9223372036854775807', '9223372036854775808', '-9223372036854775808',
  '-9223372036854775809', '18446744073709551615', '18446744073709551616', '4294967296', '2147483648', '5000', '5001', '1',
  'x'.repeat(3000), ',', ',,,', 'a,b', 'STATUS_ACTIVE,', ',STATUS_ACTIVE', 'network', 'NETWORK',
];

const BOOLEANS = ['true', 'false', 'TRUE', 'False', 't', 'F', '1', '0', 'yes', 'no', 'on', '', 'truee', ' true'];
const PAGE_SIZES = ['1', '2', '10', '100', '999', '1000', '4999', '5000', '5001', '0', '-1', '+5', '007', '1.0', '1e2', '10000000000000000000000'];

function enumValues(table: EnumTable): string[] {
  const names = table.names.filter((n): n is string => n !== undefined);
  return [
    ...names, ...names.map((n) => n.toLowerCase()), ...table.names.map((_n, i) => String(i)),
    String(table.names.length), '-1', '99999999999999999999', `${names[1]},${names[2]}`, 'STATUS_', names[0]!.slice(0, -1),
  ];
}

const upper = (xs: string[]) => xs.map((x) => x.toUpperCase());
const shorter = (xs: string[]) => xs.map((x) => x.slice(0, -1));
const nonEmpty = (xs: string[], fallback: string) => (xs.length > 0 ? xs : [fallback]);

/** A cursor: one this endpoint issued, another endpoint's, or one garbled on the way. */
function cursorArb(own: string[], foreign: string[]): fc.Arbitrary<string> {
  const ownArb = fc.constantFrom(...nonEmpty(own, 'A'.repeat(60)));
  const anyCursor = fc.constantFrom(...nonEmpty([...own, ...foreign], 'A'.repeat(60)));
  return fc.oneof(
    { weight: 5, arbitrary: ownArb },
    { weight: 2, arbitrary: fc.constantFrom(...nonEmpty(foreign, 'B'.repeat(60))) },
    // Truncated, extended, one character changed, standard base64, padded, upper-cased.
    { weight: 1, arbitrary: fc.tuple(anyCursor, position).map(([c, n]) => c.slice(0, n % c.length)) },
    { weight: 1, arbitrary: anyCursor.map((c) => `${c}A`) },
    { weight: 2, arbitrary: fc.tuple(anyCursor, position, fc.constantFrom('A', 'z', '0', '-', '_', '+', '/', '=', '.', ' ')).map(([c, n, ch]) => {
      const at = n % c.length;
      return c.slice(0, at) + ch + c.slice(at + 1);
    }) },
    { weight: 1, arbitrary: anyCursor.map((c) => c.replace(/-/g, '+').replace(/_/g, '/')) },
    { weight: 1, arbitrary: anyCursor.map((c) => `${c}==`) },
    { weight: 1, arbitrary: anyCursor.map((c) => c.toUpperCase()) },
    { weight: 1, arbitrary: fc.base64String({ minLength: 56, maxLength: 64 }) },
  );
}

/** Values that mean something to `param` on `endpoint`. */
function meaningful(param: string, endpoint: FuzzEndpoint, pools: Pools): fc.Arbitrary<string> {
  const pick = (xs: string[]) => fc.constantFrom(...nonEmpty(xs, '0'));
  const own = endpoint.connection === undefined ? [] : pools.cursors[endpoint.connection] ?? [];
  const foreign = Object.entries(pools.cursors).flatMap(([field, cs]) => (field === endpoint.connection ? [] : cs));
  switch (param) {
    case 'filter.statuses': return pick(enumValues(OrderStatus));
    case 'filter.types': return pick(enumValues(OrderType));
    case 'filter.timeInForces': return pick(enumValues(TimeInForce));
    case 'filter.partyIds': return pick([...pools.partyIds, ...upper(pools.partyIds), ...shorter(pools.partyIds), 'network', 'Network', ...pools.marketIds]);
    case 'filter.marketIds': return pick([...pools.marketIds, ...upper(pools.marketIds), ...shorter(pools.marketIds), 'network', ...pools.orderIds]);
    case 'filter.reference': return pick([...pools.references, '']);
    case 'filter.dateRange.startTimestamp':
    case 'filter.dateRange.endTimestamp':
      return fc.oneof(pick(pools.times), pick(pools.times).map((t) => String(BigInt(t) + 1n)), pick(pools.times).map((t) => String(BigInt(t) / 1000n)));
    case 'filter.liveOnly':
    case 'filter.excludeLiquidity':
    case 'pagination.newestFirst':
      return pick(BOOLEANS);
    case 'pagination.first':
    case 'pagination.last':
      return fc.oneof(pick(PAGE_SIZES), fc.integer({ min: 1, max: 5000 }).map(String));
    case 'pagination.after':
    case 'pagination.before':
      return cursorArb(own, foreign);
    case 'nodeId': return pick([...pools.nodeIds, ...upper(pools.nodeIds), ...shorter(pools.nodeIds), ...pools.partyIds]);
    case 'submitter': return pick([...pools.submitters, ...pools.submitters.map((s) => s.toUpperCase()), ...pools.submitters.map((s) => s.slice(2)), '0x']);
    case 'epochSeq': return pick([...pools.epochSeqs, ...pools.epochSeqs.map((e) => `-${e}`), '18446744073709551615', '18446744073709551616', '0']);
    default: return pick(['', 'true', '1']);
  }
}

/** Anything at all, as a value or a key. */
const anyText = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** A key: the parameter as named, in snake_case or another case, or something else entirely. */
function keyArb(param: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(param) },
    { weight: 2, arbitrary: fc.constant(param.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)) },
    { weight: 1, arbitrary: fc.constantFrom(param.toUpperCase(), param.toLowerCase(), `${param}[]`, `${param}.`, `.${param}`, param.replace(/\./g, '_')) },
  );
}

type Encoding = 'percent' | 'plus' | 'lowerHex' | 'raw' | 'badEscape' | 'invalidUtf8';
const ENCODINGS: readonly Encoding[] = ['percent', 'plus', 'lowerHex', 'raw', 'badEscape', 'invalidUtf8'];
const encodingArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Encoding>('percent') },
  { weight: 2, arbitrary: fc.constantFrom<Encoding>(...ENCODINGS) },
);

/** Kept as they are in a %-escaped query: RFC 3986's unreserved characters. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;
const BAD_ESCAPES = ['%', '%G1', '%1', '%%', '%zz', '%u0041', '%-1', '% 1'];
const INVALID_UTF8 = ['%FF', '%C0%AF', '%ED%A0%80', '%E2%82', '%F4%90%80%80', '%80'];

/**
 * `text` as bytes of a query string. `raw` keeps every byte Node's parser
 * takes in a request line (all but controls and space) and escapes the rest;
 * the others escape all but the unreserved characters.
 */
function encodeText(text: string, encoding: Encoding, where: number): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const hex = (b: number) => `%${b.toString(16).padStart(2, '0')}`;
  let out = '';
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    if (encoding === 'raw') out += b <= 0x20 || b === 0x7f ? hex(b).toUpperCase() : ch;
    else if (b < 0x80 && UNRESERVED.test(ch)) out += ch;
    else if (b === 0x20 && encoding === 'plus') out += '+';
    else out += encoding === 'lowerHex' ? hex(b) : hex(b).toUpperCase();
  }
  if (encoding === 'badEscape' || encoding === 'invalidUtf8') {
    const bad = (encoding === 'badEscape' ? BAD_ESCAPES : INVALID_UTF8)[where % 6]!;
    const at = where % (out.length + 1);
    out = out.slice(0, at) + bad + out.slice(at);
  }
  // latin1: one char per byte, so raw UTF-8 bytes pass through unchanged.
  return Buffer.from(out, 'latin1');
}

export interface FuzzRequest {
  endpoint: FuzzEndpoint;
  /** The endpoint's path, an order id in place of `{orderId}`. */
  path: string;
  /** Path and query as bytes on the wire. */
  target: Buffer;
  headers: Record<string, string>;
}

const PATH_VARIANTS = ['', '/', '//', '/.', '/..', '%2F', ';x=1', 'x', '#frag', '/%2e%2e'];

/** A request of `endpoint`: its path (now and then altered), a random query and headers. */
export function requestArb(endpoint: FuzzEndpoint, pools: Pools): fc.Arbitrary<FuzzRequest> {
  const others = ENDPOINTS.flatMap((e) => e.params).filter((p) => !endpoint.params.includes(p));
  const ownPair = fc.constantFrom(...endpoint.params).chain((param) => fc.tuple(
    keyArb(param),
    fc.oneof({ weight: 5, arbitrary: meaningful(param, endpoint, pools) }, { weight: 2, arbitrary: anyText }),
  ));
  const pair = fc.tuple(
    fc.oneof(
      { weight: 8, arbitrary: ownPair },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...others, 'filter', 'pagination', ''), anyText) },
      { weight: 1, arbitrary: fc.tuple(anyText, anyText) },
    ),
    encodingArb, encodingArb, position, fc.constantFrom('=', '=', '=', '', '=='),
  ).map(([[key, value], keyEncoding, valueEncoding, where, equals]) => Buffer.concat([
    encodeText(key, keyEncoding, where), Buffer.from(equals === '' ? '' : equals), equals === '' ? Buffer.alloc(0) : encodeText(value, valueEncoding, where >> 3),
  ]));
  const orderId = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...nonEmpty(pools.orderIds, '0'.repeat(64))) },
    { weight: 1, arbitrary: fc.constantFrom(...upper(pools.orderIds.slice(0, 5)), ...shorter(pools.orderIds.slice(0, 5)), '', 'abc', '%41', '%zz', '..') },
    // Any text as %-escaped UTF-8 bytes (encodeURIComponent throws on a lone surrogate).
    { weight: 1, arbitrary: anyText.map((t) => [...Buffer.from(t, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')) },
  );
  return fc.record({
    orderId,
    pathVariant: fc.oneof({ weight: 15, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...PATH_VARIANTS) }),
    pairs: fc.array(pair, { maxLength: 8 }),
    separator: fc.oneof({ weight: 10, arbitrary: fc.constant('&') }, { weight: 1, arbitrary: fc.constantFrom('&&', ';', '&;') }),
    question: fc.oneof({ weight: 10, arbitrary: fc.constant('?') }, { weight: 1, arbitrary: fc.constantFrom('', '??', '?&') }),
    acceptEncoding: fc.constantFrom(undefined, undefined, 'gzip', 'br', 'deflate', 'gzip, br', 'identity', '*', 'gzip;q=0', 'x-unknown'),
    ifNoneMatch: fc.oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom(...nonEmpty(pools.etags, '"x"'), '*', 'W/"x"', '"', '') },
    ),
  }).map(({ orderId: id, pathVariant, pairs, separator, question, acceptEncoding, ifNoneMatch }) => {
    const path = endpoint.path.replace('{orderId}', id);
    const query = pairs.length === 0 && question === '?' ? [] : [Buffer.from(question), ...pairs.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from(separator), p]))];
    const headers: Record<string, string> = {};
    if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
    if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch;
    return { endpoint, path, target: Buffer.concat([Buffer.from(path + pathVariant, 'latin1'), ...query]), headers };
  });
}

/** Requests of every endpoint; a paged one, with many more parameters to try, four times as often as another. */
export function anyRequestArb(pools: Pools): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...ENDPOINTS.map((e) => ({ weight: e.connection === undefined ? 1 : 4, arbitrary: requestArb(e, pools) })));
}

export interface FuzzAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** As sent, before any content coding is undone. */
  body: Buffer;
}

function decoded(answer: FuzzAnswer): Buffer {
  switch (answer.headers['content-encoding']) {
    case undefined:
    case 'identity': return answer.body;
    case 'gzip': return gunzipSync(answer.body);
    case 'br': return brotliDecompressSync(answer.body);
    case 'deflate': return inflateSync(answer.body);
    default: assert.fail(`unknown content-encoding ${String(answer.headers['content-encoding'])}`);
  }
}

/**
 * Whether Node's HTTP parser refuses `target` before any of the server's code
 * sees it: it takes no byte from 0x7f (DEL) up in a request target (checked
 * byte by byte on Node 20). Such a request is answered by the server's
 * clientError handler, and its envelope is test/integration/fuzz-http-raw's.
 */
export const parserRefuses = (request: FuzzRequest) => request.target.some((b) => b >= 0x7f);

/** The request line's target as a reader can see it. */
export const shown = (request: FuzzRequest) => JSON.stringify(request.target.toString('latin1'));

/**
 * What every answer must be: never a server error; a refusal is the
 * original's error envelope, as JSON; a page endpoint's answer, whatever it
 * is, names the last block. Returns the body as JSON.
 */
export function checkAnswer(request: FuzzRequest, answer: FuzzAnswer): unknown {
  const what = `GET ${shown(request)} ${JSON.stringify(request.headers)} -> ${answer.status}`;
  assert.ok(answer.status < 500, `${what}: a server error: ${answer.body.toString('utf8').slice(0, 500)}`);
  const exactPath = request.target.toString('latin1').split('?')[0] === request.path;
  if (request.endpoint.connection !== undefined && exactPath) {
    for (const name of ['x-block-height', 'x-block-timestamp']) {
      assert.match(String(answer.headers[name]), /^\d+$/, `${what}: ${name}`);
    }
  }
  if (answer.status === 304) {
    assert.ok(request.headers['if-none-match'] !== undefined, `${what}: 304 without If-None-Match`);
    assert.equal(answer.body.length, 0, `${what}: a 304 has no body`);
    return undefined;
  }
  assert.match(String(answer.headers['content-type']), /^application\/json(;|$)/, `${what}: content-type`);
  const text = decoded(answer).toString('utf8');
  let body: unknown;
  assert.doesNotThrow(() => (body = JSON.parse(text)), `${what}: not JSON: ${text.slice(0, 300)}`);
  if (answer.status >= 200 && answer.status < 300) {
    if (request.endpoint.connection !== undefined) {
      const connection = (body as Record<string, { edges?: unknown; pageInfo?: unknown }>)[request.endpoint.connection];
      assert.ok(Array.isArray(connection?.edges) && typeof connection?.pageInfo === 'object', `${what}: not a page: ${text.slice(0, 300)}`);
    }
    return body;
  }
  checkEnvelope(body, answer.status, what);
  return body;
}

/**
 * `{"code": <int>, "message": <string>, "details": [...]}` and nothing else;
 * unless told otherwise, its code is the gRPC code of `status`.
 */
export function checkEnvelope(body: unknown, status: number, what: string, opts: { statusFromCode?: boolean } = {}): void {
  assert.ok(typeof body === 'object' && body !== null && !Array.isArray(body), `${what}: the envelope is a JSON object`);
  const envelope = body as Record<string, unknown>;
  assert.deepEqual(Object.keys(envelope).sort(), ['code', 'details', 'message'], `${what}: envelope keys of ${JSON.stringify(body)}`);
  assert.ok(Number.isInteger(envelope.code), `${what}: code is an integer: ${JSON.stringify(body)}`);
  assert.equal(typeof envelope.message, 'string', `${what}: message is a string`);
  assert.ok(Array.isArray(envelope.details), `${what}: details is a list`);
  if (opts.statusFromCode !== false) {
    assert.equal(httpStatusOf(envelope.code as GrpcCode), status, `${what}: gRPC code ${String(envelope.code)} is not HTTP ${status}`);
  }
}
