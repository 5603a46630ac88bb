/**
 * Stalled connections (src/api/stalled-connections.ts), on real sockets: one
 * holding bytes its peer does not read, nothing moving, is closed once the
 * sweep has seen it so for the timeout; one that holds nothing, one that
 * moves, and one exempted (a stream's) are left open. Times are given to
 * sweep() by the test, so nothing waits for a timer.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import { exemptFromStalls, StalledConnections } from '../../src/api/stalled-connections.js';

const STALL_MS = 1000;

/** A connected pair: the server's end (watched) and a client end that reads nothing until told. */
async function pair(t: TestContext): Promise<{ server: Socket; client: Socket }> {
  const listener = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const accepted = once(listener, 'connection');
  const client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  client.pause();
  const [server] = (await accepted) as [Socket];
  t.after(() => {
    server.destroy();
    client.destroy();
    listener.close();
  });
  return { server, client };
}

/** Writes to `socket` until Node holds bytes the kernel did not take (its peer reads nothing), 256 MB at most. */
async function fillUntilHeld(socket: Socket): Promise<void> {
  const chunk = Buffer.alloc(1 << 20, 1);
  for (let i = 0; i < 256 && socket.writableLength === 0; i++) {
    socket.write(chunk);
    // The kernel takes what its buffers hold, at once: what it left stays held.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(socket.writableLength > 0, 'bytes held');
}

test('a connection holding bytes its client does not read, nothing moving, is closed after the timeout, not before', async (t) => {
  const { server } = await pair(t);
  const stalled = new StalledConnections(STALL_MS);
  stalled.watch(server);
  await fillUntilHeld(server);
  // Whole milliseconds: (t0 + STALL_MS) - t0 is STALL_MS exactly.
  const t0 = Math.ceil(performance.now());
  assert.equal(stalled.sweep(t0), 0, 'moved since watched: not stalled yet');
  assert.equal(stalled.sweep(t0 + STALL_MS - 1), 0, 'stalled for less than the timeout');
  assert.equal(server.destroyed, false);
  assert.equal(stalled.sweep(t0 + STALL_MS), 1, 'stalled for the timeout');
  assert.equal(server.destroyed, true);
  assert.equal(stalled.size, 0);
});

test('a connection that holds nothing is never stalled, however long it idles', async (t) => {
  const { server } = await pair(t);
  const stalled = new StalledConnections(STALL_MS);
  stalled.watch(server);
  // Whole milliseconds: (t0 + STALL_MS) - t0 is STALL_MS exactly.
  const t0 = Math.ceil(performance.now());
  for (let i = 1; i <= 10; i++) assert.equal(stalled.sweep(t0 + i * STALL_MS), 0);
  assert.equal(server.destroyed, false);
});

test('a connection whose client reads between sweeps is not stalled', async (t) => {
  const { server, client } = await pair(t);
  const stalled = new StalledConnections(STALL_MS);
  stalled.watch(server);
  // Whole milliseconds: (t0 + STALL_MS) - t0 is STALL_MS exactly.
  const t0 = Math.ceil(performance.now());
  for (let i = 1; i <= 4; i++) {
    await fillUntilHeld(server);
    // The client takes what was held: the writes complete, and what Node holds changes.
    const drained = once(server, 'drain');
    client.resume();
    await drained;
    client.pause();
    assert.equal(stalled.sweep(t0 + i * STALL_MS), 0, `sweep ${i}: it moved`);
  }
  assert.equal(server.destroyed, false);
});

test('an exempted connection (a stream\'s) is left to its own rules', async (t) => {
  const { server } = await pair(t);
  const stalled = new StalledConnections(STALL_MS);
  stalled.watch(server);
  exemptFromStalls(server);
  await fillUntilHeld(server);
  // Whole milliseconds: (t0 + STALL_MS) - t0 is STALL_MS exactly.
  const t0 = Math.ceil(performance.now());
  assert.equal(stalled.sweep(t0), 0);
  assert.equal(stalled.sweep(t0 + 10 * STALL_MS), 0);
  assert.equal(server.destroyed, false);
  assert.equal(stalled.size, 0, 'no longer watched');
});

test('the sweep runs four times per timeout, and a closed connection is forgotten', async (t) => {
  const { server } = await pair(t);
  const stalled = new StalledConnections(STALL_MS);
  assert.equal(stalled.sweepMs, STALL_MS / 4);
  stalled.watch(server);
  assert.equal(stalled.size, 1);
  server.destroy();
  await once(server, 'close');
  assert.equal(stalled.size, 0);
});
