/**
 * The writer thread of ./writer.ts: owns the writer's PostgreSQL session
 * (./write-session.ts) and does nothing but talk to the server, so no reply
 * waits for the ingesting thread to finish decoding a chunk or encoding a group.
 */
import { workerData } from 'node:worker_threads';
import { runWriterThread } from '../writer-protocol.js';
import type { EncodedGroup } from './group-writer.js';
import { fromPostgres } from './errors.js';
import { PostgresWriteSession } from './write-session.js';
import type { PostgresWriterInput } from './writer.js';

/** Buffers arrive as plain Uint8Arrays: streams and pg want Buffers. */
function asBuffers(group: EncodedGroup): EncodedGroup {
  const buffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return { ...group, copies: group.copies.map((c) => ({ sql: c.sql, data: buffer(c.data) })) };
}

const input = workerData as PostgresWriterInput;
runWriterThread<EncodedGroup>(async ({ signal, onStandby, notice }) => {
  const session = await PostgresWriteSession.open(input.url, {
    wait: input.wait, signal, pollMs: input.pollMs, onStandby, notice, retention: input.retention,
  });
  return {
    lastBlock: () => session.lastBlock(),
    storedBlocks: (from, to) => session.storedBlocks(from, to),
    write: (group) => session.write(asBuffers(group)),
    ...(session.prune !== undefined && { prune: session.prune }),
    close: () => session.close(),
  };
}, (e) => fromPostgres(e, input.url));
