/**
 * The embedded store's WriteStore: its SQLite connection lives on a thread of
 * its own (./writer-thread.ts). The caller's thread reads and decodes the
 * source and turns blocks into rows as they complete (GroupRows, ../rows.ts);
 * the writer thread only binds and commits them. While one group is being
 * committed the next is read, which takes ingestion from one core to two.
 */
import { GroupRows, transferables, type PreparedGroup } from '../rows.js';
import type { CommittedBlock, WriteStore } from '../store.js';
import { ThreadWriter } from '../thread-writer.js';

export class SqliteWriter implements WriteStore<GroupRows> {
  private constructor(private readonly thread: ThreadWriter<PreparedGroup>) {}

  /** Starts the writer thread on the file at `path` (created or migrated); fails as opening it fails. */
  static async open(path: string): Promise<SqliteWriter> {
    return new SqliteWriter(await ThreadWriter.open<PreparedGroup>('SQLite', new URL('./writer-thread.js', import.meta.url), { path }));
  }

  lastBlock(): Promise<CommittedBlock | undefined> {
    return this.thread.lastBlock();
  }

  blockHashes(from: bigint, to: bigint): Promise<Map<bigint, string>> {
    return this.thread.blockHashes(from, to);
  }

  newBatch(): GroupRows {
    return new GroupRows();
  }

  write(batch: GroupRows): Promise<void> {
    return this.thread.write(() => {
      const group = batch.finish();
      return group && { group, transfer: transferables(group) };
    });
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
