/**
 * What a connection may take of the server (src/api/http-server.ts): a head
 * that does not arrive is answered 408 in the envelope and closed within
 * the head timeout (Node's defaults held it ~90 s and cut it with a bare
 * 408), an idle connection is closed after the idle timeout, and a process
 * holds no more connections than its limit, and a closing server lets none
 * of them hold it open.
 */
import assert from 'node:assert/strict';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../../src/api/app.js';
import { eventually } from '../support/cli.js';
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

test('a closing server closes at once a connection that sent nothing, and cuts a head that never ends after its grace', async () => {
  const GRACE_MS = 1500;
  // Heads may take a minute: what closes these connections must be the close, not the head timeout.
  const app = await buildApp({ store: store(), http: { headTimeoutMs: 60_000, idleTimeoutMs: 60_000 }, closeGraceMs: GRACE_MS });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const silent = await open(port);
  const partial = await open(port);
  partial.write('GET /health HTTP/1.1\r\nHost: x\r\n');
  const closedAt = (socket: Socket) => new Promise<number>((resolve) => {
    socket.on('error', () => {});
    socket.once('close', () => resolve(Date.now()));
  });
  const silentClosed = closedAt(silent);
  const partialClosed = closedAt(partial);
  // The server has read the partial head before it closes.
  await eventually('the partial head to reach the server', async () => partial.bytesWritten > 0 && partial.writableLength === 0, 5000);
  await sleep(200);
  const started = Date.now();
  const closing = app.close().then(() => Date.now());
  try {
    // Before, neither was ever closed (Node stops its head checks as it closes): the waits below only stop a hang.
    const hang = sleep(GRACE_MS + 8000).then(() => 0);
    const silentMs = (await Promise.race([silentClosed, hang])) - started;
    assert.ok(silentMs >= 0 && silentMs < GRACE_MS / 2, `the connection that sent nothing closed ${silentMs} ms after close()`);
    const partialMs = (await Promise.race([partialClosed, hang])) - started;
    assert.ok(partialMs >= GRACE_MS - 50, `the head under way was cut ${partialMs} ms after close(), before the grace`);
    const closedMs = (await Promise.race([closing, hang])) - started;
    assert.ok(closedMs >= 0, 'close() ended');
  } finally {
    silent.destroy();
    partial.destroy();
    await closing;
  }
});
