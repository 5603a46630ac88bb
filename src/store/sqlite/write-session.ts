/**
 * The embedded store's write session, held by its writer thread
 * (./writer-thread.ts): the one read-write connection, which creates or
 * migrates the file, and writes each group in one transaction
 * (./group-writer.ts).
 */
import type Database from 'better-sqlite3';
import { ARCHIVE, retentionText, type Retention } from '../../domain/retention.js';
import type { PruneStep } from '../prune-turns.js';
import { prunedBeforeNotice } from '../retention-notice.js';
import { fromU64, u64, type PackedGroup } from '../rows.js';
import type { CommittedBlock, StoredBlock } from '../store.js';
import type { WriteSession } from '../writer-protocol.js';
import { GroupWriter } from './group-writer.js';
import { openDatabase } from './database.js';
import { SqlitePruner } from './pruner.js';
import { LAST_BLOCK_SQL, readLastBlock } from './store.js';

export class SqliteWriteSession implements WriteSession<PackedGroup> {
  private readonly lastBlockStatement: Database.Statement;
  private readonly storedBlocksStatement: Database.Statement;
  private readonly writer: GroupWriter;
  readonly prune: PruneStep | undefined;
  /** A batch's work runs on the writer thread whole. */
  readonly pruneClock = 'threadCpu';

  private constructor(private readonly db: Database.Database, retention: Retention) {
    this.prune = retention.kind === 'window' ? new SqlitePruner(db, retention.ns).step : undefined;
    this.lastBlockStatement = db.prepare(LAST_BLOCK_SQL);
    this.storedBlocksStatement = db
      .prepare("SELECT height, hash, digest FROM blocks WHERE height BETWEEN ? AND ? AND hash <> ''")
      .raw(true);
    this.writer = new GroupWriter(db, () => this.lastBlock());
  }

  /** Opens (creating or migrating) the file at `path`; `notice` hears what an operator should know. */
  static open(path: string, retention: Retention = ARCHIVE, notice: (message: string) => void = () => {}): SqliteWriteSession {
    const db = openDatabase({ path, notice });
    const prunedWith = db.prepare('SELECT window_ns FROM retention WHERE only_row = 1').pluck().get() as bigint | null;
    const said = prunedBeforeNotice(prunedWith ?? undefined, retention);
    if (said !== undefined) notice(said);
    db.prepare('UPDATE retention SET setting = ? WHERE only_row = 1').run(retentionText(retention));
    return new SqliteWriteSession(db, retention);
  }

  lastBlock(): CommittedBlock | undefined {
    return readLastBlock(this.lastBlockStatement);
  }

  storedBlocks(from: bigint, to: bigint): Map<bigint, StoredBlock> {
    const rows = this.storedBlocksStatement.all(u64(from), u64(to)) as [unknown, string, string][];
    return new Map(rows.map(([height, hash, digest]) => [fromU64(height), { hash, digest }]));
  }

  /** Writes a group prepared on the ingesting thread, in one transaction. */
  write(group: PackedGroup): void {
    this.writer.write(group);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
