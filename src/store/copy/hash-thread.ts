/**
 * The thread a copy's table checks are hashed on (./table-hash.ts), so that
 * SHA-256 of every row runs on a second core beside reading and writing.
 * Messages, in order: chunks of a table's encoded rows, then that table's
 * finish, answered with its row count and digest sum.
 */
import { parentPort } from 'node:worker_threads';
import { addRowDigests, DIGEST_WORDS, sumHex } from './row-digests.js';
import type { HashReply, HashRequest } from './hash-protocol.js';

const sums = new Map<number, { sum: Uint32Array; rows: number }>();
const port = parentPort!;

port.on('message', (m: HashRequest) => {
  let table = sums.get(m.table);
  if (table === undefined) sums.set(m.table, (table = { sum: new Uint32Array(DIGEST_WORDS), rows: 0 }));
  if (m.kind === 'chunk') {
    addRowDigests(table.sum, Buffer.from(m.chunk, 0, m.bytes), new Uint32Array(m.ends, 0, m.rows), m.rows);
    table.rows += m.rows;
    port.postMessage({ kind: 'hashed', table: m.table } satisfies HashReply);
  } else {
    sums.delete(m.table);
    port.postMessage({ kind: 'finished', table: m.table, rows: table.rows, hash: sumHex(table.sum) } satisfies HashReply);
  }
});
