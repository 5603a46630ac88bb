/**
 * The thread a copy's table checks are hashed on (./table-hash.ts), so that
 * SHA-256 runs on a second core beside reading and writing. Messages, in
 * order: chunks of a table's encoded rows, then that table's finish,
 * answered with its row count and hash.
 */
import { parentPort } from 'node:worker_threads';
import { RowsHash } from './rows-hash.js';
import type { HashReply, HashRequest } from './hash-protocol.js';

const tables = new Map<number, RowsHash>();
const port = parentPort!;

port.on('message', (m: HashRequest) => {
  if (m.kind === 'chunk') {
    let table = tables.get(m.table);
    if (table === undefined) tables.set(m.table, (table = new RowsHash(m.ordered)));
    table.add(Buffer.from(m.chunk, 0, m.bytes), new Uint32Array(m.ends, 0, m.rows), m.rows);
    port.postMessage({ kind: 'hashed', table: m.table } satisfies HashReply);
  } else {
    const table = tables.get(m.table) ?? new RowsHash(m.ordered);
    tables.delete(m.table);
    port.postMessage({ kind: 'finished', table: m.table, rows: table.rows, hash: table.finish() } satisfies HashReply);
  }
});
