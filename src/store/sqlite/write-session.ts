/**
 * The embedded store's write session, held by its writer thread
 * (./writer-thread.ts): the one read-write connection, which creates or
 * migrates the file, and writes each group in one transaction
 * (./block-writer.ts).
 */
import type Database from 'better-sqlite3';
import { fromU64, u64, type PreparedGroup } from '../rows.js';
import type { CommittedBlock } from '../store.js';
import type { WriteSession } from '../writer-protocol.js';
import { BlockWriter } from './block-writer.js';
import { openDatabase } from './database.js';
import { LAST_BLOCK_SQL, readLastBlock } from './store.js';

export class SqliteWriteSession implements WriteSession<PreparedGroup> {
  private readonly lastBlockStatement: Database.Statement;
  private readonly blockHashesStatement: Database.Statement;
  private readonly writer: BlockWriter;

  private constructor(private readonly db: Database.Database) {
    this.lastBlockStatement = db.prepare(LAST_BLOCK_SQL);
    this.blockHashesStatement = db.prepare('SELECT height, hash FROM blocks WHERE height BETWEEN ? AND ?').raw(true);
    this.writer = new BlockWriter(db, () => this.lastBlock());
  }

  /** Opens (creating or migrating) the file at `path`. */
  static open(path: string): SqliteWriteSession {
    return new SqliteWriteSession(openDatabase({ path }));
  }

  lastBlock(): CommittedBlock | undefined {
    return readLastBlock(this.lastBlockStatement);
  }

  blockHashes(from: bigint, to: bigint): Map<bigint, string> {
    const rows = this.blockHashesStatement.all(u64(from), u64(to)) as [unknown, string][];
    return new Map(rows.map(([height, hash]) => [fromU64(height), hash]));
  }

  /** Writes a group prepared on the ingesting thread, in one transaction. */
  write(group: PreparedGroup): void {
    this.writer.write(group);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
