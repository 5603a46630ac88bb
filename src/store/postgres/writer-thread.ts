/**
 * The writer thread of ./writer.ts: owns the writer's PostgreSQL session
 * (./writer-session.ts) and does nothing but talk to the server, so no reply
 * waits for the ingest thread to finish decoding a chunk or encoding a group.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { threadError } from '../thread-calls.js';
import type { EncodedGroup } from './block-writer.js';
import type { WriterReply, WriterRequest, WriterThreadInput } from './writer-messages.js';
import { WriterSession } from './writer-session.js';

/** Buffers arrive as plain Uint8Arrays: streams and pg want Buffers. */
function asBuffers(group: EncodedGroup): EncodedGroup {
  const buffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return {
    ...group,
    copies: group.copies.map((c) => ({ sql: c.sql, data: buffer(c.data) })),
  };
}

async function serve(port: NonNullable<typeof parentPort>, input: WriterThreadInput): Promise<void> {
  const post = (m: WriterReply) => port.postMessage(m);
  const abort = new AbortController();
  // Until the session is open, only an abort can arrive.
  const onAbort = (m: WriterRequest) => {
    if (m.type === 'abort') abort.abort();
  };
  port.on('message', onAbort);
  let session: WriterSession;
  try {
    session = await WriterSession.open(input.url, {
      wait: input.wait, signal: abort.signal, pollMs: input.pollMs,
      onStandby: () => post({ type: 'standby' }),
    });
  } catch (e) {
    post({ type: 'openFailed', error: threadError(e) });
    port.close();
    return;
  }
  port.off('message', onAbort);
  port.on('message', (request: WriterRequest) => {
    if (request.type === 'abort') return;
    const settle = (work: Promise<unknown>) =>
      work.then(
        (value) => post({ type: 'reply', id: request.id, value }),
        (e: unknown) => post({ type: 'reply', id: request.id, error: threadError(e) }),
      );
    switch (request.type) {
      case 'lastBlock':
        return void settle(session.lastBlock());
      case 'blockHashes':
        return void settle(session.blockHashes(request.from, request.to));
      case 'write': {
        const group = request.error ? Object.assign(new Error(request.error.message), { name: request.error.name }) : request.group && asBuffers(request.group);
        return void settle(session.write(group));
      }
      case 'close':
        return void settle(session.close()).then(() => port.close());
    }
  });
  post({ type: 'opened' });
}

if (parentPort) void serve(parentPort, workerData as WriterThreadInput);
