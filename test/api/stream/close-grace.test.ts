/**
 * An HTTP stream that ends while its client reads nothing is cut once its
 * grace is over: what was left unsent is not held for as long as the client
 * stays.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { OrderStreamHub, type OrderStreamSource } from '../../../src/api/stream/hub.js';
import { OrderStreams } from '../../../src/api/stream/transports.js';
import { orderNodeJson } from '../../../src/store/order-node.js';
import { order } from '../../store/helpers.js';

/** A snapshot of 20,000 orders, ~14 MB: more than the sockets' buffers take from a client that does not read. */
const source: OrderStreamSource = {
  liveOrders: async () => ({ height: 1n, nodes: Array.from({ length: 20_000 }, (_, i) => orderNodeJson(order(i + 1))) }),
  orderChanges: async () => [],
  lastHeight: async () => 1n,
  firstChangeHeight: async () => 1n,
};

let server: Server | undefined;
after(() => server?.close());

test('an ended HTTP stream whose client reads nothing is cut after its grace', async () => {
  const streams = new OrderStreams(new OrderStreamHub(source, { bufferBytes: 1 << 20 }), {
    perClient: 10, pingSeconds: 30, refusalHeaders: () => [], closeGraceMs: 200,
  });
  let serverSide: Socket | undefined;
  server = createServer((req, res) => {
    serverSide = req.socket;
    streams.streamOverHttp(req, res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const client = connect(port, '127.0.0.1');
  client.pause();
  client.write('GET /api/v2/stream/orders HTTP/1.1\r\nHost: x\r\n\r\n');
  // The snapshot is written, most of it left unsent behind the client's full buffers.
  while (serverSide === undefined || serverSide.writableLength === 0) await new Promise((r) => setTimeout(r, 20));
  const cut = new Promise<void>((resolve) => serverSide!.once('close', () => resolve()));
  streams.close();
  const within = await Promise.race([cut.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
  assert.ok(within, 'the server let go of the connection within 5 s of a 200 ms grace');
  client.destroy();
});
