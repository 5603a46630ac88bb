/**
 * The thread that reads an embedded source's rows for a copy's check
 * (./copy-attached.ts), on a connection of its own, while the copy's own
 * thread reads the target back: the check's two reads on two cores. Its
 * snapshot is begun on request; the copy proves it is the copy's own.
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
  db.exec('COMMIT');
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
