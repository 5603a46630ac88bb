/**
 * The WriteStore of PostgreSQL. The thread that reads and decodes the source
 * turns each group into COPY data here (./block-writer.ts), while the
 * previous group commits; a thread of its own (./writer-thread.ts) holds the
 * writer's one session, with the writer lock, and sends each group to the
 * server. PostgreSQL does the rest on its own processes.
 */
import { GroupRows } from '../rows.js';
import type { CommittedBlock, WriterOptions, WriteStore } from '../store.js';
import { ThreadWriter } from '../thread-writer.js';
import { encodeGroup, encodedTransferables, type EncodedGroup } from './block-writer.js';

export interface PostgresWriterOptions extends WriterOptions {
  /** For tests: how often a standby asks for the writer lock (ms). */
  pollMs?: number;
}

/** What the writer thread is started with. */
export interface PostgresWriterInput {
  url: string;
  wait: boolean;
  pollMs: number | undefined;
}

export class PostgresWriter implements WriteStore<GroupRows> {
  private constructor(private readonly thread: ThreadWriter<EncodedGroup>) {}

  /**
   * Connects a session of its own, migrates the schema and takes the writer
   * lock on that session, so that if this process dies PostgreSQL rolls back
   * its open transaction and frees the lock at once. Without `wait`, fails if
   * another instance holds the lock; with it, waits as a standby (calling
   * onStandby once) until the lock frees or `signal` aborts.
   */
  static async open(url: string, options: PostgresWriterOptions = {}): Promise<PostgresWriter> {
    const input: PostgresWriterInput = { url, wait: options.wait ?? false, pollMs: options.pollMs };
    return new PostgresWriter(await ThreadWriter.open('PostgreSQL', new URL('./writer-thread.js', import.meta.url), input, options));
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

  /** Encodes the batch now, on this thread, and resolves once it is committed. */
  write(batch: GroupRows): Promise<void> {
    return this.thread.write(() => {
      const prepared = batch.finish();
      const group = prepared && encodeGroup(prepared);
      return group && { group, transfer: encodedTransferables(group) };
    });
  }

  /** Waits for outstanding writes, gives up the writer lock and ends the session and its thread. */
  close(): Promise<void> {
    return this.thread.close();
  }
}
