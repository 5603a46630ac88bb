/**
 * What a connection may take of the server (src/api/http-server.ts): a head
 * that does not arrive is answered 408 in the envelope and closed within
 * the head timeout (Node's defaults held it ~90 s and cut it with a bare
 * 408), an idle connection is closed after the idle timeout, and a process
 * holds no more connections than its limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createModelStore } from '../support/model.js';
import { makeBlock } from './fixtures.js';
import { assertEnvelope, listening, open, parse, raw, readUntilClosed } from './raw-http.js';

const store = () => createModelStore([makeBlock(1), makeBlock(2)]);
const HEAD_MS = 600;
const IDLE_MS = 800;
const http = { headTimeoutMs: HEAD_MS, idleTimeoutMs: IDLE_MS };

test('a connection that sends nothing is answered 408 in the envelope and closed within the head timeout', async (t) => {
  const { port } = await listening(t, { store: store(), http });
  // Closed by the server (the 10 s only stop a hang), not before the head timeout, saying which one it waited.
  const answer = await raw(port, undefined, 10_000);
  assert.ok(answer.closed, 'the server closed it');
  assert.ok(answer.ms >= HEAD_MS - 50, `closed after ${answer.ms} ms`);
  assertEnvelope(parse(answer.text), 408, 4, `${HEAD_MS / 1000} s`);
  assert.equal(parse(answer.text).headers.get('connection'), 'close');
});

test('a head sent slowly is cut off at the head timeout, with the block the server last saw', async (t) => {
  const { port } = await listening(t, { store: store(), http });
  // The server has read its store once: the refusal can name the block.
  assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  const socket = await open(port);
  socket.write('GET /api/v2/orders HTTP/1.1\r\nHost: x\r\n');
  // Bytes keep coming for as long as the connection is open: only a head timeout that they do not put off closes it.
  const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 100);
  const answer = await readUntilClosed(socket, undefined, 10_000);
  clearInterval(drip);
  assert.ok(answer.closed, `still open after ${answer.ms} ms though the head timeout is ${HEAD_MS} ms`);
  const parsed = parse(answer.text);
  assertEnvelope(parsed, 408, 4, `${HEAD_MS / 1000} s`);
  assert.equal(parsed.headers.get('x-block-height'), '2');
});

test('a keep-alive connection idle after its answer is closed after the idle timeout', async (t) => {
  const { app, port } = await listening(t, { store: store(), http: { headTimeoutMs: 5000, idleTimeoutMs: IDLE_MS } });
  // Node's own keep-alive timeout, set to ours, is what closes it: the close below is that timer's, not a later one.
  assert.equal(app.server.keepAliveTimeout, IDLE_MS);
  const socket = await open(port);
  const answer = await readUntilClosed(socket, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 10_000);
  assert.equal(parse(answer.text).status, 200);
  assert.ok(answer.closed, 'closed by the server');
  assert.ok(answer.ms >= IDLE_MS - 50, `closed after ${answer.ms} ms, before the idle timeout`);
});

test('a process holds no more connections than its limit; one freed makes room', async (t) => {
  const { port } = await listening(t, { store: store(), http: { maxConnections: 2 } });
  const first = await open(port);
  const second = await open(port);
  const third = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 3000);
  assert.ok(third.closed, 'the connection over the limit is closed');
  assert.equal(third.text, '', 'without an answer');
  for (const s of [first, second]) {
    const answer = await readUntilClosed(s, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 3000);
    assert.equal(parse(answer.text).status, 200, 'the connections within the limit are served');
  }
  // Both closed: room again, once the server has seen them go (asked until it has; the deadline only stops a hang).
  const deadline = Date.now() + 10_000;
  let again = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 3000);
  while (again.text === '' && Date.now() < deadline) again = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 3000);
  assert.equal(parse(again.text).status, 200);
});
