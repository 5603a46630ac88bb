/**
 * The thread that reads an embedded store's rows for a copy's check, on a
 * connection of its own: a source's (./copy-attached.ts) while the copy's
 * own thread reads the target back, the check's two reads on two cores,
 * its snapshot begun on request and proved the copy's own; or a target's
 * (./copy-target.ts) while the copy's own thread builds its indexes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { toWire } from '../../errors.js';
import { TableHash } from '../copy/table-hash.js';
import type { CheckReply, CheckRequest } from './copy-check-protocol.js';
import { SOURCE_MMAP_BYTES, sqliteRows } from './copy-tables.js';
import { openDatabase } from './database.js';
import { fromSqlite } from './errors.js';
import { LAST_BLOCK_SQL } from './reader.js';

const port = parentPort!;
const { path } = workerData as { path: string };
const reply = (m: CheckReply) => port.postMessage(m);
const db = openDatabase({ path, readOnly: true });
db.pragma(`mmap_size = ${SOURCE_MMAP_BYTES}`);
const lastBlock = db.prepare(LAST_BLOCK_SQL);

async function hash(tables: Extract<CheckRequest, { kind: 'hash' }>['tables']): Promise<void> {
  for (const { shape, order } of tables) {
    // Hashed here, in place: this thread is the second core.
    const check = new TableHash(order !== 'stored');
    for await (const rows of sqliteRows(db, shape, order)) for (const row of rows) check.add(row);
    const { rows, hash } = await check.finish();
    reply({ kind: 'checked', table: shape.name, rows, hash });
  }
  // A source's snapshot ends; a target's rows are read without one (each page on its own: nothing writes them).
  if (db.inTransaction) db.exec('COMMIT');
}

port.on('message', (m: CheckRequest) => {
  try {
    if (m.kind === 'begin') {
      if (db.inTransaction) db.exec('ROLLBACK');
      db.exec('BEGIN');
      // The snapshot starts with the transaction's first read.
      lastBlock.get();
      reply({ kind: 'begun' });
    } else {
      hash(m.tables).catch((e: unknown) => reply({ kind: 'failed', error: toWire(fromSqlite(e, path)) }));
    }
  } catch (e) {
    reply({ kind: 'failed', error: toWire(fromSqlite(e, path)) });
  }
});
