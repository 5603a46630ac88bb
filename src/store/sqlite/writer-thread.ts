/** The writer thread of ./writer.ts: owns the write connection, answers one request at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import type { PreparedGroup } from '../rows.js';
import { threadError, type ThreadReply } from '../thread-calls.js';
import { openSqliteStore, type SqliteStore } from './store.js';

export type WriterRequest =
  | { id: number; type: 'ready' }
  | { id: number; type: 'lastBlock' }
  | { id: number; type: 'blockHashes'; from: bigint; to: bigint }
  | { id: number; type: 'write'; group: PreparedGroup }
  | { id: number; type: 'close' };

function serve(port: NonNullable<typeof parentPort>, path: string): void {
  let store: SqliteStore | undefined;
  let openError: Error | undefined;
  // Writes queued behind a failed one were prepared as its successors: writing
  // them would leave a hole where its blocks belong.
  let failedWrite: string | undefined;
  try {
    store = openSqliteStore({ path });
  } catch (e) {
    openError = e as Error;
  }
  port.on('message', (request: WriterRequest) => {
    const reply = (r: Pick<ThreadReply, 'value' | 'error'>) => port.postMessage({ ...r, type: 'reply', id: request.id } satisfies ThreadReply);
    try {
      if (request.type === 'close') {
        store?.closeSync();
        reply({});
        return port.close();
      }
      if (store === undefined) throw openError;
      switch (request.type) {
        case 'ready':
          return reply({});
        case 'lastBlock':
          return reply({ value: store.lastBlockSync() });
        case 'blockHashes':
          return reply({ value: store.blockHashesSync(request.from, request.to) });
        case 'write':
          if (failedWrite !== undefined) throw new Error(`not written: an earlier group failed: ${failedWrite}`);
          try {
            store.writePreparedSync(request.group);
          } catch (e) {
            failedWrite = (e as Error).message;
            throw e;
          }
          return reply({});
      }
    } catch (e) {
      reply({ error: threadError(e) });
    }
  });
}

if (parentPort) serve(parentPort, (workerData as { path: string }).path);
