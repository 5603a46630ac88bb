/**
 * A WriteStore whose SQLite connection lives on a thread of its own. The
 * caller's thread reads and decodes the source and turns blocks into rows as
 * they complete (GroupRows, ../rows.ts); the writer thread only binds
 * and commits them. While one group is being committed the next is read,
 * which takes ingestion from one core to two.
 */
import { Worker } from 'node:worker_threads';
import { GroupRows, transferables } from '../rows.js';
import type { CommittedBlock, WriteStore } from '../store.js';
import { ThreadCalls } from '../thread-calls.js';
import type { WriterRequest } from './writer-thread.js';

export class SqliteWriter implements WriteStore<GroupRows> {
  private constructor(private readonly thread: ThreadCalls<WriterRequest>) {}

  /** Starts the writer thread; fails as opening the database fails (a newer schema, say). */
  static async open(path: string): Promise<SqliteWriter> {
    const worker = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: { path } });
    const thread = new ThreadCalls<WriterRequest>(worker, 'the SQLite writer thread exited');
    try {
      await thread.call({ type: 'ready' });
    } catch (e) {
      await worker.terminate();
      throw e;
    }
    return new SqliteWriter(thread);
  }

  async lastBlock(): Promise<CommittedBlock | undefined> {
    return (await this.thread.call({ type: 'lastBlock' })) as CommittedBlock | undefined;
  }

  async blockHashes(from: bigint, to: bigint): Promise<Map<bigint, string>> {
    return (await this.thread.call({ type: 'blockHashes', from, to })) as Map<bigint, string>;
  }

  newBatch(): GroupRows {
    return new GroupRows();
  }

  /**
   * Resolves once the batch is committed. Calls may overlap: batches are
   * written in the order of the calls, and once one fails, every later one
   * fails too (the thread refuses them).
   */
  async write(batch: GroupRows): Promise<void> {
    const group = batch.finish();
    if (group !== undefined) await this.thread.call({ type: 'write', group }, transferables(group));
  }

  close(): Promise<void> {
    return this.thread.end({ type: 'close' });
  }
}
