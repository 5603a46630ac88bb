/**
 * Every refusal in the original's error envelope, with the block headers
 * and no sniffing, whoever refuses: Node's HTTP parser (a malformed request
 * line, a head too long), Node itself (no Host, an Expect, CONNECT), Fastify
 * (no such route, a bad %-escape in the path) and the API (too many values
 * in a list filter). And the URL size a client of the original may rely on:
 * 1,000 party ids, as repeated keys and comma-separated.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { createModelStore } from '../support/model.js';
import { makeBlock, makeOrder } from './fixtures.js';
import { assertEnvelope, listening, parse, raw, type ParsedResponse } from './raw-http.js';

async function served(t: TestContext, http = {}) {
  const orders = [makeOrder(1, { partyId: 'c'.repeat(64) })];
  const { port } = await listening(t, { store: createModelStore([makeBlock(1), makeBlock(7, { orders })]), http });
  // The server has seen its store: every refusal can name the block.
  assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  return port;
}

async function send(port: number, head: string | Buffer): Promise<ParsedResponse> {
  return parse((await raw(port, head)).text);
}

function assertBlock(answer: ParsedResponse): void {
  assert.equal(answer.headers.get('x-block-height'), '7', 'the block headers');
  assert.ok(Number(answer.headers.get('x-block-timestamp')) > 0);
}

test('what Node\'s parser refuses is answered in the envelope, with the block headers', async (t) => {
  const port = await served(t);
  const cases: [string, string | Buffer, number, number][] = [
    ['raw non-ASCII bytes in the URL', Buffer.concat([Buffer.from('GET /api/v2/orders?filter.reference='), Buffer.from([0xc3, 0xa9]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]), 400, 3],
    ['a space in the URL', 'GET /api/v2/orders?filter.reference=a b HTTP/1.1\r\nHost: x\r\n\r\n', 400, 3],
    ['a method nobody knows', 'FROB /api/v2/orders HTTP/1.1\r\nHost: x\r\n\r\n', 405, 12],
    ['not HTTP at all', 'hello\r\n\r\n', 400, 3],
    ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nnonsense\r\n\r\n', 400, 3],
  ];
  for (const [what, head, status, grpc] of cases) {
    const answer = await send(port, head);
    assertEnvelope(answer, status, grpc);
    assertBlock(answer);
    assert.equal(answer.headers.get('connection'), 'close', what);
    if (status === 405) assert.equal(answer.headers.get('allow'), 'GET, HEAD, OPTIONS', what);
  }
});

test('a page reads why its request was refused even where the parser gave up on it: every origin is allowed by default', async (t) => {
  const port = await served(t, { maxHeadBytes: 32 * 1024 });
  const tooLong = `GET /api/v2/orders?filter.reference=${'a'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n\r\n`;
  for (const head of [tooLong, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']) {
    const answer = await send(port, head);
    assert.equal(answer.headers.get('access-control-allow-origin'), '*', head.slice(0, 20));
    assert.match(answer.headers.get('access-control-expose-headers') ?? '', /X-Block-Height/);
  }
  // With a list of origins, the request's Origin cannot be read to echo: none is named.
  const listed = await served(t, { maxHeadBytes: 32 * 1024, corsOrigins: ['https://app.example'] });
  assert.equal((await send(listed, tooLong)).headers.get('access-control-allow-origin'), undefined);
});

test('the first request a server gets, refused by the parser, names the block already', async (t) => {
  const { port } = await listening(t, { store: createModelStore([makeBlock(1), makeBlock(7)]) });
  const answer = await send(port, 'FROB / HTTP/1.1\r\nHost: x\r\n\r\n');
  assertEnvelope(answer, 405, 12);
  assertBlock(answer);
});

test('a URL past the head limit is a 431 in the envelope naming the limit', async (t) => {
  const port = await served(t, { maxHeadBytes: 32 * 1024 });
  const answer = await send(port, `GET /api/v2/orders?filter.reference=${'a'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertEnvelope(answer, 431, 3, `${32 * 1024} bytes`);
  assertBlock(answer);
});

test('1,000 party ids fit in a URL by default, as repeated keys or comma-separated; 1,001 are a 400 naming the parameter', async (t) => {
  const port = await served(t);
  const ids = Array.from({ length: 999 }, () => randomBytes(32).toString('hex'));
  ids.push('c'.repeat(64));
  const repeated = ids.map((id) => `filter.party_ids=${id}`).join('&');
  const commas = `filter.partyIds=${ids.join(',')}`;
  assert.ok(repeated.length > 80_000, `${repeated.length} bytes`);
  for (const query of [repeated, commas]) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v2/orders?${query}`);
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { orders: { edges: { node: { partyId: string } }[] } };
    assert.deepEqual(body.orders.edges.map((e) => e.node.partyId), ['c'.repeat(64)]);
  }
  const over = await fetch(`http://127.0.0.1:${port}/api/v2/orders?${repeated}&filter.party_ids=${'d'.repeat(64)}`);
  assert.equal(over.status, 400);
  const body = (await over.json()) as { code: number; message: string; details: { code: number }[] };
  assert.equal(body.details[0]!.code, 10029);
  assert.match(body.message, /filter\.party_ids: more than 1000 values/);
  assert.equal(over.headers.get('x-block-height'), '7');
});

test('the limit of values per list filter is the server\'s to set, for every list filter', async (t) => {
  const port = await served(t, { maxListValues: 3 });
  assert.equal((await fetch(`http://127.0.0.1:${port}/api/v2/orders?filter.statuses=1,2,3`)).status, 200);
  for (const query of ['filter.statuses=1,2,3,4', 'filter.types=1&filter.types=2,3&filter.types=1', `filter.marketIds=${'a'.repeat(64)},`.repeat(4)]) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v2/orders?${query}`);
    assert.equal(res.status, 400, query);
    assert.match(((await res.json()) as { message: string }).message, /more than 3 values/);
  }
});

test('refusals of Fastify and Node carry the block headers and the envelope too', async (t) => {
  const port = await served(t);
  const cases: [string, string, number, number][] = [
    ['no such route', 'GET /api/v2/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 404, 5],
    ['a method that would write, on a path that is served', 'DELETE /api/v2/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 405, 12],
    ['a method that would write, on a path that is not', 'PUT /api/v2/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}', 405, 12],
    ['a POST with a body', 'POST /api/v2/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', 405, 12],
    ['TRACE', 'TRACE /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 405, 12],
    ['a bad %-escape in the path', 'GET /api/v2/orders%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400, 3],
    ['a bad %-escape in the query', 'GET /api/v2/orders?filter.reference=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 400, 3],
    ['an HTTP/1.1 request without Host', 'GET /api/v2/orders HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 3],
    ['an expectation nobody meets', 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n', 417, 3],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 12],
  ];
  for (const [what, head, status, grpc] of cases) {
    const answer = await send(port, head);
    assertEnvelope(answer, status, grpc);
    assert.equal(answer.headers.get('x-block-height'), '7', what);
    if (status === 405) assert.equal(answer.headers.get('allow'), 'GET, HEAD, OPTIONS', what);
  }
});
