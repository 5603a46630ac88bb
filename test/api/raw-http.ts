/** Talking to a real server over a raw socket: for what no HTTP client will send, and for timing what the server does. */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../src/api/app.js';

/** A server listening on an ephemeral port of 127.0.0.1, closed after the test. */
export async function listening(t: TestContext, options: AppOptions): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildApp(options);
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => {
    // A client a test left unread (a stream it never reads, say) would hold close() for the server's close grace (10 s).
    app.server.closeAllConnections();
    return app.close();
  });
  return { app, port: (app.server.address() as AddressInfo).port };
}

export interface RawAnswer {
  /** Everything the server wrote until it closed the connection (or the wait ended). */
  text: string;
  /** Whether the server closed the connection. */
  closed: boolean;
  /** Milliseconds from the first byte sent (or the connection) to the close. */
  ms: number;
}

/** Opens a connection and waits until it is open. */
export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends `bytes` (nothing, if undefined) on a new connection and reads until the server closes it, or `waitMs` passes. */
export async function raw(port: number, bytes: string | Buffer | undefined, waitMs = 5000): Promise<RawAnswer> {
  const socket = await open(port);
  return readUntilClosed(socket, bytes, waitMs);
}

export function readUntilClosed(socket: Socket, bytes: string | Buffer | undefined, waitMs: number): Promise<RawAnswer> {
  const started = Date.now();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.once('close', () => done(true));
    if (bytes !== undefined) socket.write(bytes);
  });
}

export interface ParsedResponse {
  status: number;
  /** Header names in lower case. */
  headers: Map<string, string>;
  body: string;
}

/** The first response in `text`. */
export function parse(text: string): ParsedResponse {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `an HTTP response, not ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const length = Number(headers.get('content-length') ?? 0);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4, end + 4 + length) };
}

/** Asserts an answer in the original's error envelope, with its status, gRPC code and a message naming each of `mentions`. */
export function assertEnvelope(answer: ParsedResponse, status: number, grpc: number, ...mentions: string[]): void {
  assert.equal(answer.status, status, answer.body);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(answer.body) as { code: number; message: string; details: unknown[] };
  assert.deepEqual(Object.keys(body), ['code', 'message', 'details']);
  assert.equal(body.code, grpc);
  for (const m of mentions) assert.ok(body.message.includes(m), `${JSON.stringify(body.message)} should mention ${m}`);
  assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
}
