/**
 * The WriteStore of PostgreSQL. The thread that reads and decodes the source
 * turns each group into COPY data here (./block-writer.ts), while the
 * previous group commits; a thread of its own (./writer-thread.ts) holds the
 * writer's one session, with the writer lock, and sends each group to the
 * server. PostgreSQL does the rest on its own processes.
 */
import { Worker } from 'node:worker_threads';
import { GroupRows } from '../rows.js';
import type { WriterOptions } from '../open.js';
import type { CommittedBlock, WriteStore } from '../store.js';
import { errorFromThread, threadError, ThreadCalls, type ThreadError } from '../thread-calls.js';
import { encodeGroup, encodedTransferables, type EncodedGroup } from './block-writer.js';
import { WriterLockHeldError } from './election.js';
import type { WriterReply, WriterRequest, WriterThreadInput } from './writer-messages.js';

export interface PostgresWriterOptions extends WriterOptions {
  /** For tests: how often a standby asks for the writer lock (ms). */
  pollMs?: number;
}

/** The error a thread reported, as the class it was where that matters to callers. */
function fromThread(e: ThreadError, signal?: AbortSignal): Error {
  if (e.name === 'WriterLockHeldError') return new WriterLockHeldError();
  if (e.name === 'AbortError' && signal?.aborted) {
    return signal.reason instanceof Error ? signal.reason : new DOMException(e.message, 'AbortError');
  }
  return errorFromThread(e);
}

type Call = Exclude<WriterRequest, { type: 'abort' }>;

export class PostgresWriter implements WriteStore<GroupRows> {
  private readonly thread: ThreadCalls<Call>;

  private constructor(worker: Worker) {
    this.thread = new ThreadCalls<Call>(worker, 'the PostgreSQL writer thread has ended', fromThread);
  }

  /**
   * Connects a session of its own, migrates the schema and takes the writer
   * lock on that session, so that if this process dies PostgreSQL rolls back
   * its open transaction and frees the lock at once. Without `wait`, fails if
   * another instance holds the lock; with it, waits as a standby (calling
   * onStandby once) until the lock frees or `signal` aborts.
   */
  static async open(url: string, options: PostgresWriterOptions = {}): Promise<PostgresWriter> {
    const { signal } = options;
    signal?.throwIfAborted();
    const input: WriterThreadInput = { url, wait: options.wait ?? false, pollMs: options.pollMs };
    const worker = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: input });
    const abort = () => worker.postMessage({ type: 'abort' } satisfies WriterRequest);
    signal?.addEventListener('abort', abort, { once: true });
    // Listeners of our own, removed by name: a Worker has listeners of its own too.
    let onMessage: ((m: WriterReply) => void) | undefined;
    let onError: ((e: Error) => void) | undefined;
    let onExit: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onMessage = (m) => {
          if (m.type === 'standby') options.onStandby?.();
          else if (m.type === 'opened') resolve();
          else if (m.type === 'openFailed') reject(fromThread(m.error, signal));
        };
        onError = reject;
        onExit = () => reject(new Error('the PostgreSQL writer thread ended while opening'));
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      });
    } catch (e) {
      await worker.terminate();
      throw e;
    } finally {
      signal?.removeEventListener('abort', abort);
      worker.off('message', onMessage!).off('error', onError!).off('exit', onExit!);
    }
    return new PostgresWriter(worker);
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
   * Encodes the batch now, on this thread, and resolves once it is committed.
   * Calls may overlap: they are written in call order, and a call made while
   * an earlier one is outstanding fails, writing nothing, if that one fails.
   */
  async write(batch: GroupRows): Promise<void> {
    let group: EncodedGroup | undefined;
    let error: ThreadError | undefined;
    try {
      const prepared = batch.finish();
      group = prepared && encodeGroup(prepared);
    } catch (e) {
      // It still takes its turn, so that writes behind it fail too.
      error = threadError(e);
    }
    await this.thread.call({ type: 'write', group, ...(error ? { error } : {}) }, group ? encodedTransferables(group) : []);
  }

  /** Waits for outstanding writes, gives up the writer lock and ends the session and its thread. */
  close(): Promise<void> {
    return this.thread.end({ type: 'close' });
  }
}
