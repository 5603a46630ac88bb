/**
 * What Node's HTTP parser sees before any route does: raw non-ASCII and
 * spaces in the request line, bad methods and versions, very long URLs and
 * headers, malformed heads, garbage bytes (fixed cases and fast-check's), and
 * heads or bodies that come slowly or never end. On the real server
 * (buildApp, through real sockets) over the embedded store: the parser and
 * the answers before routing are the same whatever the backend.
 *
 * Two kinds of assertion, in separate tests:
 * - SURVIVES: never a server error, and the server answers a good request
 *   after each case.
 * - ENVELOPE: each case is answered, within
 *   a bounded time, in the error envelope (`{"code","message","details"}`,
 *   application/json) with the X-Block-* headers, saying `Connection: close`
 *   when the server then closes the connection (without it, a client that
 *   keeps connections alive sends its next request on the closing one and
 *   gets "socket hang up", as the HTTP fuzzer's client did), and a head or
 *   body that never ends is cut off within RAW_DEADLINE_MS (before the
 *   hardening, Fastify's own clientError body answered them, or Node's empty
 *   400, or nothing, and Node waited 60 s or more for a head).
 *   FUZZ_RAW_VERBOSE=1 lists every failing case.
 *
 * FUZZ_SEED reproduces a run; FUZZ_SCALE scales the random cases;
 * FUZZ_RAW_DEADLINE_MS (20000) is how long a slow client may hold a connection.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { openStore, openWriter } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { fuzzRuns, fuzzSeed, Tally } from '../support/fuzz.js';
import { anyRequestArb, checkEnvelope, parserRefuses, type Pools } from '../support/http-fuzz.js';
import { position } from '../support/mutations.js';
import { getRequest, rawExchange, type RawAnswer, type RawWrite } from '../support/raw-http.js';

const RAW_DEADLINE_MS = Number(process.env.FUZZ_RAW_DEADLINE_MS ?? 20_000);
/** An answer to a request that arrived whole comes at once; this only keeps a broken server from hanging the test. */
const PROMPT_MS = 5_000;
const RANDOM_CASES = fuzzRuns(400);

const ORDERS = '/api/v2/orders';
const dir = mkdtempSync(join(tmpdir(), 'lq-fuzz-raw-'));
let store: QueryStore;
let app: FastifyInstance;
let port: number;

before(async () => {
  const file = join(dir, 'sim.events');
  await writeEventFile(file, { seed: 3, blocks: 10, ordersPerBlock: 5 });
  const config = { dataDir: join(dir, 'data') };
  const writer = await openWriter(config);
  await ingest(fileSource(file), writer);
  await writer.close();
  store = await openStore(config, { readOnly: true });
  app = await buildApp({ store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

after(async () => {
  await app?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface RawCase {
  name: string;
  write: RawWrite;
  /** Half-close after writing. */
  end?: boolean;
  /** Never completes a request: must be cut off by a timeout, not answered at once. */
  slow?: boolean;
}

const line = (requestLine: string, headers = 'Host: 127.0.0.1\r\n') => Buffer.from(`${requestLine}\r\n${headers}\r\n`, 'latin1');
const utf8Line = (requestLine: string) => Buffer.concat([Buffer.from(requestLine, 'utf8'), Buffer.from('\r\nHost: 127.0.0.1\r\n\r\n')]);

/** Writes `bytes` one at a time, `everyMs` apart, until done or the server closes. */
const dribble = (bytes: Buffer, everyMs: number) => async (socket: Socket) => {
  for (const byte of bytes) {
    if (socket.destroyed) return;
    socket.write(Buffer.from([byte]));
    await sleep(everyMs);
  }
};

const CASES: readonly RawCase[] = [
  { name: 'raw UTF-8 in the query', write: utf8Line(`GET ${ORDERS}?filter.reference=é日🚀 HTTP/1.1`) },
  { name: 'raw UTF-8 in the path', write: utf8Line('GET /api/v2/ördérs HTTP/1.1') },
  { name: 'raw Latin-1 byte in the query', write: line(`GET ${ORDERS}?filter.reference=\xe9 HTTP/1.1`) },
  { name: 'a space in the query', write: line(`GET ${ORDERS}?filter.reference=a b HTTP/1.1`) },
  { name: 'a space in the path', write: line('GET /api/v2/ord ers HTTP/1.1') },
  { name: 'a tab in the target', write: line(`GET ${ORDERS}?a=\tb HTTP/1.1`) },
  { name: 'NUL in the target', write: line(`GET ${ORDERS}?a=\0 HTTP/1.1`) },
  { name: 'DEL in the target', write: line(`GET ${ORDERS}?a=\x7f HTTP/1.1`) },
  { name: 'a bare CR in the request line', write: line(`GET ${ORDERS}\r HTTP/1.1`) },
  { name: 'an unknown method', write: line(`FOO ${ORDERS} HTTP/1.1`) },
  { name: 'a lower-case method', write: line(`get ${ORDERS} HTTP/1.1`) },
  { name: 'a method with a symbol', write: line(`G@T ${ORDERS} HTTP/1.1`) },
  { name: 'no method', write: line(` ${ORDERS} HTTP/1.1`) },
  { name: 'a 10 KB method', write: line(`${'G'.repeat(10_000)} ${ORDERS} HTTP/1.1`) },
  { name: 'POST to a page endpoint', write: line(`POST ${ORDERS} HTTP/1.1`, 'Host: x\r\nContent-Length: 2\r\n') },
  { name: 'DELETE', write: line(`DELETE ${ORDERS} HTTP/1.1`) },
  { name: 'OPTIONS', write: line(`OPTIONS ${ORDERS} HTTP/1.1`) },
  { name: 'TRACE', write: line(`TRACE ${ORDERS} HTTP/1.1`) },
  { name: 'PROPFIND', write: line(`PROPFIND ${ORDERS} HTTP/1.1`) },
  { name: 'CONNECT', write: line('CONNECT 127.0.0.1:22 HTTP/1.1'), end: true },
  { name: 'the HTTP/2 preface', write: Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), end: true },
  { name: 'HTTP/1.2', write: line(`GET ${ORDERS} HTTP/1.2`) },
  { name: 'HTTP/2.0 in an HTTP/1 request line', write: line(`GET ${ORDERS} HTTP/2.0`) },
  { name: 'HTTP/0.9 (no version)', write: Buffer.from(`GET ${ORDERS}\r\n\r\n`), end: true },
  { name: 'a misspelt version', write: line(`GET ${ORDERS} HTPT/1.1`) },
  { name: 'HTTP/1.1 without Host', write: Buffer.from(`GET ${ORDERS} HTTP/1.1\r\n\r\n`) },
  { name: 'two Host headers', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: a\r\nHost: b\r\n') },
  { name: 'HEAD of an unknown path', write: line('HEAD /nowhere HTTP/1.1') },
  { name: 'a target not starting with /', write: line('GET api/v2/orders HTTP/1.1') },
  { name: 'an absolute-form target', write: line(`GET http://127.0.0.1${ORDERS}?pagination.first=1 HTTP/1.1`) },
  { name: 'an asterisk target', write: line('GET * HTTP/1.1') },
  { name: 'a 15 KB URL (under the limit)', write: line(`GET ${ORDERS}?filter.reference=${'x'.repeat(15_000)} HTTP/1.1`) },
  { name: 'a 100 KB URL', write: line(`GET ${ORDERS}?filter.reference=${'x'.repeat(100_000)} HTTP/1.1`) },
  { name: 'a 2 MB URL', write: line(`GET ${ORDERS}?${'a=b&'.repeat(500_000)} HTTP/1.1`) },
  { name: 'a 100 KB header', write: line(`GET ${ORDERS} HTTP/1.1`, `Host: x\r\nX-Long: ${'y'.repeat(100_000)}\r\n`) },
  { name: '3,000 headers', write: line(`GET ${ORDERS} HTTP/1.1`, `Host: x\r\n${'X-A: b\r\n'.repeat(3000)}`) },
  { name: 'a header name with a space', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: x\r\nBad Header: 1\r\n') },
  { name: 'a header without a colon', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: x\r\nNoColon\r\n') },
  { name: 'NUL in a header value', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: x\r\nX-A: a\0b\r\n') },
  { name: 'a folded header line', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: x\r\nX-A: a\r\n b\r\n') },
  { name: 'LF-only line ends', write: Buffer.from(`GET ${ORDERS} HTTP/1.1\nHost: x\n\n`) },
  { name: 'a non-numeric Content-Length', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: x\r\nContent-Length: abc\r\n') },
  { name: 'two different Content-Lengths', write: line(`GET ${ORDERS} HTTP/1.1`, 'Host: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n') },
  { name: 'Content-Length and chunked together', write: line(`POST ${ORDERS} HTTP/1.1`, 'Host: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n') },
  { name: 'a bad chunk size', write: Buffer.from(`POST ${ORDERS} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`) },
  { name: 'a good request, then garbage', write: Buffer.concat([getRequest(`${ORDERS}?pagination.first=1`), Buffer.from('\x00\xff garbage\r\n\r\n', 'latin1')]) },
  { name: 'garbage bytes', write: Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0xde, 0xad, 0xbe, 0xef]), end: true },
  { name: 'a TLS client hello', write: Buffer.from('160301020001000200030300000000000000000000000000000000', 'hex'), end: true },
  { name: 'a head cut off by the client', write: Buffer.from(`GET ${ORDERS} HTTP/1.1\r\nHost: x\r\n`), end: true },
  { name: 'a request line cut off by the client', write: Buffer.from('GE'), end: true },
  { name: 'a head that never ends', write: Buffer.from(`GET ${ORDERS} HTTP/1.1\r\nHost: x\r\n`), slow: true },
  { name: 'a request line that never ends', write: Buffer.from(`GET ${ORDERS}?pagination.first=1`), slow: true },
  { name: 'a head sent a byte every 500 ms', write: dribble(getRequest(`${ORDERS}?${'a=1&'.repeat(50)}`), 500), slow: true },
  { name: 'a body that never ends', write: Buffer.from(`POST ${ORDERS} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc`), slow: true },
  { name: 'an idle connection that never sends', write: Buffer.alloc(0), slow: true },
];

/** The server still answers a good request. */
async function checkAlive(what: string): Promise<void> {
  const answer = await rawExchange(port, getRequest(`${ORDERS}?pagination.first=1`), { deadlineMs: PROMPT_MS });
  assert.equal(answer.status, 200, `after ${what}: the server answers a good request: ${answer.received.toString('latin1').slice(0, 300)}`);
}

/** What holds today: never a server error. */
function checkSurvived(c: { name: string }, answer: RawAnswer): void {
  if (answer.status !== undefined) assert.ok(answer.status < 500, `${c.name}: a server error: ${answer.received.toString('latin1').slice(0, 400)}`);
}

/** Whether `bytes` holds anything but line ends: an empty connection owes no answer. */
const saysSomething = (bytes: Buffer) => bytes.some((b) => b !== 0x0d && b !== 0x0a);

/**
 * The envelope, with the block headers, as every refusal is. A server that closes the connection after answering (as after a
 * request it could not parse) says so in the answer: a client that keeps
 * connections alive would otherwise send its next request on one being closed.
 */
function checkEnveloped(c: { name: string; end?: boolean; write?: RawWrite }, answer: RawAnswer): void {
  const what = c.name;
  const shownAnswer = answer.received.toString('latin1').slice(0, 400);
  assert.ok(answer.status !== undefined, `${what}: an HTTP answer, got ${JSON.stringify(shownAnswer)} (${answer.closed ? 'closed' : 'still open'} after ${answer.ms} ms)`);
  const saysClose = () => {
    if (answer.closed && c.end !== true) {
      // The last answer before the close says it (a good request answered, then what followed it refused).
      const lastHead = answer.received.toString('latin1').split(/(?=HTTP\/1\.1 \d{3} )/).at(-1) ?? '';
      assert.match(lastHead.split('\r\n\r\n')[0]!, /^Connection: close\r?$/im, `${what}: closed after answering, without Connection: close, in ${JSON.stringify(shownAnswer)}`);
    }
  };
  if (answer.status >= 200 && answer.status < 300) return saysClose();
  assert.ok(answer.status >= 400 && answer.status < 500, `${what}: a 4xx refusal, got ${answer.status}`);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json(;|$)/, `${what}: content-type of ${JSON.stringify(shownAnswer)}`);
  for (const name of ['x-block-height', 'x-block-timestamp']) {
    assert.match(answer.headers[name] ?? '', /^\d+$/, `${what}: ${name} in ${JSON.stringify(shownAnswer)}`);
  }
  // An answer to HEAD has no body, by definition.
  if (c.write instanceof Buffer && c.write.subarray(0, 5).toString('latin1') === 'HEAD ') return saysClose();
  let body: unknown;
  assert.doesNotThrow(() => (body = JSON.parse(answer.body.toString('utf8'))), `${what}: JSON body, got ${JSON.stringify(shownAnswer)}`);
  // The status is the parser's to choose (408, 413, 431...); the envelope's shape is ours.
  checkEnvelope(body, answer.status, what, { statusFromCode: false });
  saysClose();
}

/**
 * A slow case until the server closes it (or the deadline); any other until its answer, and, where the client did not
 * half-close, whether the server keeps the connection (a good request follows on it).
 */
const exchange = (c: RawCase, followUp = true) => rawExchange(port, c.write, c.slow
  ? { deadlineMs: RAW_DEADLINE_MS, untilClose: true }
  : { deadlineMs: PROMPT_MS, end: c.end ?? false, ...(followUp && c.end !== true ? { followUp: getRequest('/health') } : {}) });

test('SURVIVES: every malformed request: never a server error, and the server answers the next good one', async (t) => {
  const statuses = new Tally();
  for (const c of CASES.filter((k) => !k.slow)) {
    const answer = await exchange(c, false);
    statuses.add(answer.status === undefined ? 'no answer' : String(answer.status));
    checkSurvived(c, answer);
    await checkAlive(c.name);
  }
  t.diagnostic(`${statuses.total} cases; by status: ${statuses.toString()}`);
});

test('SURVIVES: slow and never-ending requests do not stop the server answering others', async () => {
  // Each slow client holds its connection while a good request is answered beside it.
  const slow = CASES.filter((c) => c.slow).map((c) => rawExchange(port, c.write, { deadlineMs: 2_000 }));
  await checkAlive('slow clients connected');
  for (const answer of await Promise.all(slow)) checkSurvived({ name: 'a slow client' }, answer);
});

/** Random requests: pure garbage, and good requests with bytes flipped, inserted or removed. */
function randomRequests(): fc.Arbitrary<Buffer> {
  const good = fc.constantFrom(
    getRequest(`${ORDERS}?pagination.first=2&filter.statuses=STATUS_ACTIVE`),
    getRequest('/api/v2/erc20/multisigcontrol/signer/added/bundles?pagination.last=1'),
    getRequest('/health'),
    getRequest('/api/v2/ingest/status?pretty', 'Accept-Encoding: gzip\r\n'),
  );
  const mutation = fc.record({ at: position, kind: fc.constantFrom('flip', 'insert', 'delete', 'cut'), byte: fc.integer({ min: 0, max: 255 }), count: fc.integer({ min: 1, max: 4 }) });
  const mutated = fc.tuple(good, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([request, mutations]) => {
    let bytes = Buffer.from(request);
    for (const m of mutations) {
      const at = m.at % Math.max(1, bytes.length);
      if (m.kind === 'flip') bytes[at] = bytes[at]! ^ (1 << (m.byte % 8));
      else if (m.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.alloc(m.count, m.byte), bytes.subarray(at)]);
      else if (m.kind === 'delete') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.count)]);
      else bytes = bytes.subarray(0, at);
    }
    return bytes;
  });
  const tokens = fc.tuple(
    fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'X', '', 'GET GET', '\u00e9'),
    fc.constantFrom(ORDERS, '/health', '/', '*', '', ORDERS + '?a=%zz', ORDERS + '?a=\u00e9'),
    fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/1', 'HTTP/9.9', '', 'http/1.1'),
    fc.constantFrom('\r\n', '\n', '\r', ''),
  ).map(([method, target, version, eol]) => Buffer.from(`${method} ${target} ${version}${eol}Host: x${eol}${eol}`, 'latin1'));
  return fc.oneof(mutated, tokens, fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)));
}

test(`SURVIVES: ${RANDOM_CASES} random garbage and mutated requests`, async (t) => {
  const seed = fuzzSeed(t);
  const statuses = new Tally();
  await fc.assert(
    fc.asyncProperty(randomRequests(), async (bytes) => {
      const answer = await rawExchange(port, bytes, { deadlineMs: PROMPT_MS, end: true });
      statuses.add(answer.status === undefined ? 'no answer' : String(answer.status));
      checkSurvived({ name: JSON.stringify(bytes.toString('latin1')) }, answer);
    }),
    { numRuns: RANDOM_CASES, seed },
  );
  await checkAlive('the random requests');
  t.diagnostic(`${statuses.total} requests; by status: ${statuses.toString()}`);
});

/**
 * Runs every case, `parallel` at a time, collecting each failure, so that one
 * report names them all (the first line of each, and how many cases failed so).
 */
async function everyCase(t: TestContext, cases: readonly RawCase[], check: (c: RawCase, answer: RawAnswer) => void, parallel = cases.length): Promise<void> {
  const failures: string[] = [];
  const kinds = new Tally();
  for (let i = 0; i < cases.length; i += parallel) {
    const slice = cases.slice(i, i + parallel);
    for (const { c, answer } of await Promise.all(slice.map(async (c) => ({ c, answer: await exchange(c) })))) {
      try {
        check(c, answer);
      } catch (e) {
        const message = (e as Error).message.split('\n')[0]!;
        failures.push(message);
        kinds.add(message.replace(/^[^:]*: /, '').replace(/ (of|in|got) .*$/, ''));
      }
    }
  }
  t.diagnostic(`${cases.length - failures.length} of ${cases.length} cases answered as they should`);
  if (failures.length > 0) t.diagnostic(`failures by kind: ${kinds.toString()}`);
  // Every failure, for a closer look: FUZZ_RAW_VERBOSE=1.
  if (process.env.FUZZ_RAW_VERBOSE === '1') for (const f of failures) t.diagnostic(f);
  assert.ok(failures.length === 0, `${failures.length} cases not answered in the envelope; the first:\n${failures.slice(0, 12).join('\n')}`);
}

test(`ENVELOPE: every malformed request is refused in the error envelope with the block headers`, async (t) => {
  await everyCase(t, CASES.filter((c) => !c.slow), (c, answer) => {
    if (saysSomething(c.write as Buffer)) checkEnveloped(c, answer);
  });
});

test(`ENVELOPE: a request that never completes is refused in the envelope and closed within ${RAW_DEADLINE_MS} ms`, async (t) => {
  await everyCase(t, CASES.filter((c) => c.slow), (c, answer) => {
    assert.ok(answer.closed, `${c.name}: still open after ${answer.ms} ms (the deadline)`);
    if (c.write instanceof Buffer && c.write.length === 0) return; // said nothing: a close is answer enough
    checkEnveloped(c, answer);
  });
});

/** Byte strings as cases: each sent at once, then a half-close. */
const asCases = (requests: Buffer[]): RawCase[] =>
  requests.filter(saysSomething).map((bytes) => ({ name: JSON.stringify(bytes.toString('latin1')).slice(0, 200), write: bytes, end: true }));

test(`ENVELOPE: ${RANDOM_CASES} random garbage and mutated requests are answered in the envelope`, async (t) => {
  const seed = fuzzSeed(t);
  await everyCase(t, asCases(fc.sample(randomRequests(), { numRuns: RANDOM_CASES, seed })), checkEnveloped, 20);
});

test(`ENVELOPE: the HTTP fuzzer's requests with raw non-ASCII bytes in the target are refused in the envelope`, async (t) => {
  const seed = fuzzSeed(t);
  // Values that mean nothing to this store: the parser refuses these requests before any is read.
  const pools: Pools = {
    orderIds: ['ab'.repeat(32)], partyIds: ['cd'.repeat(32)], marketIds: ['ef'.repeat(32)], references: ['ref'], times: ['1704067200000000000'],
    nodeIds: ['01'.repeat(32)], submitters: [`0x${'ab'.repeat(20)}`], epochSeqs: ['3'], cursors: { orders: ['A'.repeat(60)], bundles: ['B'.repeat(60)] }, etags: ['"x"'],
  };
  const requests = fc.sample(anyRequestArb(pools).filter(parserRefuses), { numRuns: RANDOM_CASES, seed })
    .map((r) => Buffer.concat([Buffer.from('GET '), r.target, Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')]));
  await everyCase(t, asCases(requests), checkEnveloped, 20);
});
