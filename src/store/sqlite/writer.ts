/**
 * A WriteStore whose SQLite connection lives on a thread of its own. The
 * caller's thread reads and decodes the source and turns blocks into rows as
 * they complete (GroupRows, ../rows.ts); the writer thread only binds
 * and commits them. While one group is being committed the next is read,
 * which takes ingestion from one core to two.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { GroupRows, transferables } from '../rows.js';
import type { CommittedBlock, WriteStore } from '../store.js';
import type { WriterReply, WriterRequest } from './writer-thread.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

export class SqliteWriter implements WriteStore<GroupRows> {
  private readonly waiting = new Map<number, Pending>();
  private nextId = 1;
  private gone: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: WriterReply) => {
      const pending = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.error !== undefined) pending?.reject(new Error(reply.error));
      else pending?.resolve(reply.value);
    });
    worker.on('error', (e) => this.lose(e));
    worker.on('exit', (code) => this.lose(new Error(`the SQLite writer thread exited (code ${code})`)));
  }

  /** Starts the writer thread; fails as opening the database fails (a newer schema, say). */
  static async open(path: string): Promise<SqliteWriter> {
    const worker = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: { path } });
    const writer = new SqliteWriter(worker);
    try {
      await writer.call({ type: 'ready' });
    } catch (e) {
      await worker.terminate();
      throw e;
    }
    return writer;
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
   * Resolves once the batch is committed. Calls may overlap: batches are
   * written in the order of the calls, and once one fails, every later one
   * fails too (the thread refuses them).
   */
  async write(batch: GroupRows): Promise<void> {
    const group = batch.finish();
    if (group !== undefined) await this.call({ type: 'write', group }, transferables(group));
  }

  async close(): Promise<void> {
    if (this.gone) return;
    const exited = once(this.worker, 'exit');
    await this.call({ type: 'close' });
    await exited;
  }

  private call(request: DistributiveOmit<WriterRequest, 'id'>, transfer: ArrayBuffer[] = []): Promise<unknown> {
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
