/**
 * The WriteStore of PostgreSQL. The thread that reads and decodes the source
 * turns each group into COPY data here (./block-writer.ts), while the
 * previous group commits; a thread of its own (./writer-thread.ts) holds the
 * writer's one session, with the writer lock, and sends each group to the
 * server. PostgreSQL does the rest on its own processes.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { GroupRows } from '../rows.js';
import type { WriterOptions } from '../open.js';
import { SchemaVersionError, type CommittedBlock, type WriteStore } from '../store.js';
import { encodeGroup, encodedTransferables, type EncodedGroup } from './block-writer.js';
import { WriterLockHeldError } from './election.js';
import { threadError, type ThreadError, type WriterReply, type WriterRequest, type WriterThreadInput } from './writer-messages.js';

export interface PostgresWriterOptions extends WriterOptions {
  /** For tests: how often a standby asks for the writer lock (ms). */
  pollMs?: number;
}

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** The error a thread reported, as the class it was where that matters to callers. */
function fromThread(e: ThreadError, signal?: AbortSignal): Error {
  if (e.name === 'WriterLockHeldError') return new WriterLockHeldError();
  if (e.name === 'SchemaVersionError') return new SchemaVersionError(e.message);
  if (e.name === 'AbortError' && signal?.aborted) {
    return signal.reason instanceof Error ? signal.reason : new DOMException(e.message, 'AbortError');
  }
  return Object.assign(new Error(e.message), { name: e.name });
}

export class PostgresWriter implements WriteStore<GroupRows> {
  private readonly waiting = new Map<number, Pending>();
  private nextId = 1;
  private gone: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: WriterReply) => {
      if (reply.type !== 'reply') return;
      const pending = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.error !== undefined) pending?.reject(fromThread(reply.error));
      else pending?.resolve(reply.value);
    });
    worker.on('error', (e) => this.lose(e));
    worker.on('exit', () => this.lose(new Error('the PostgreSQL writer thread has ended')));
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
    return (await this.call({ type: 'lastBlock' })) as CommittedBlock | undefined;
  }

  async blockHashes(from: bigint, to: bigint): Promise<Map<bigint, string>> {
    return (await this.call({ type: 'blockHashes', from, to })) as Map<bigint, string>;
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
    await this.call({ type: 'write', group, ...(error ? { error } : {}) }, group ? encodedTransferables(group) : []);
  }

  /** Waits for outstanding writes, gives up the writer lock and ends the session and its thread. */
  async close(): Promise<void> {
    if (this.gone) return;
    const exited = once(this.worker, 'exit');
    await this.call({ type: 'close' });
    await exited;
  }

  private call(request: DistributiveOmit<Exclude<WriterRequest, { type: 'abort' }>, 'id'>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  private lose(error: Error): void {
    this.gone ??= error;
    for (const pending of this.waiting.values()) pending.reject(this.gone);
    this.waiting.clear();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
