/**
 * An embedded store as a copy's source: one read-only connection in one read
 * transaction, which in WAL mode is a snapshot that the writer's commits do
 * not change, and which stops nobody. What it costs the store: the WAL cannot
 * be checkpointed past the snapshot while the copy reads, so it grows by
 * what the writer commits meanwhile, and is folded back after.
 */
import { existsSync } from 'node:fs';
import { StoreNotFoundError } from '../../errors.js';
import type { CopySource } from '../copy/contract.js';
import { refuseIncompleteEmbedded } from '../incomplete.js';
import { databasePath } from '../location.js';
import { openDatabase } from './database.js';
import { SOURCE_MMAP_BYTES, sqliteTableReader } from './copy-tables.js';
import { LAST_BLOCK_SQL, readLastBlock } from './store.js';

export function openSqliteCopySource(dataDir: string): CopySource {
  refuseIncompleteEmbedded(dataDir);
  const path = databasePath(dataDir);
  if (!existsSync(path)) throw new StoreNotFoundError(`no ledger-query store in ${dataDir} to copy`);
  const db = openDatabase({ path, readOnly: true });
  try {
    db.pragma(`mmap_size = ${SOURCE_MMAP_BYTES}`);
    // The snapshot starts with the transaction's first read: the last block, which it then holds.
    db.exec('BEGIN');
    const block = readLastBlock(db.prepare(LAST_BLOCK_SQL));
    const reader = sqliteTableReader(db, path);
    return {
      ...reader,
      block,
      // Closing ends the read transaction, and the snapshot with it.
      close: async () => {
        if (db.open) db.close();
      },
    };
  } catch (e) {
    db.close();
    throw e;
  }
}
