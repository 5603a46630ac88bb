/**
 * The caller's side of a writer thread (./writer-protocol.ts), the same for
 * both backends: it starts the thread, waits for it to open its session (as
 * a standby, with PostgreSQL, until it holds the writer lock), then sends
 * each call with an id and resolves it with the reply of that id. Once the
 * thread is gone, every call outstanding or to come fails.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { checkAborted, fromWire, toWire, WriterClosedError, type LedgerError } from '../errors.js';
import { GroupRows } from './rows.js';
import type { CommittedBlock, StoredBlock, WriterOptions, WriteStore } from './store.js';
import type { WriterCall, WriterReply, WriterRequest } from './writer-protocol.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** A group packed to send, and the buffers to move to the thread rather than copy. */
export interface OutgoingGroup<G> {
  group: G;
  transfer?: ArrayBuffer[];
}

/** How a backend packs a group into what its thread writes; undefined for a group without blocks. */
export type PackGroup<G> = (group: GroupRows) => OutgoingGroup<G> | undefined;

/** What starts a backend's writer thread. */
export interface WriterThreadSpec<G> {
  /** For messages: `SQLite`, `PostgreSQL`. */
  name: string;
  module: URL;
  workerData: unknown;
  pack: PackGroup<G>;
}

/** The writer: the WriteStore of either backend, whose groups its writer thread writes. */
export class StoreWriter<G> implements WriteStore<GroupRows> {
  private readonly waiting = new Map<number, Pending>();
  private nextId = 1;
  private gone: LedgerError | undefined;
  /** The last write sent whose reply has not come: the next write follows it. */
  private unsettledWrite: number | undefined;

  private constructor(
    private readonly worker: Worker, name: string, private readonly pack: PackGroup<G>, options: WriterOptions,
  ) {
    worker.on('message', (reply: WriterReply) => {
      if (reply.type === 'notice') options.onNotice?.(reply.message);
      if (reply.type === 'pruned') options.onPruned?.(reply.rows, reply.ms, reply.cpuMs);
      if (reply.type !== 'reply') return;
      const pending = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.error !== undefined) pending?.reject(fromWire(reply.error));
      else pending?.resolve(reply.value);
    });
    worker.on('error', (e) => this.lose(new WriterClosedError(`the ${name} writer thread failed: ${e.message}`)));
    worker.on('exit', (code) => this.lose(new WriterClosedError(`the ${name} writer thread exited (code ${code})`)));
  }

  /**
   * Starts the writer thread of `module` and waits until it has opened its
   * session; fails as opening fails, the thread gone.
   */
  static async open<G>(spec: WriterThreadSpec<G>, options: WriterOptions = {}): Promise<StoreWriter<G>> {
    const { name, module, workerData, pack } = spec;
    const { signal } = options;
    checkAborted(signal, `opening the ${name} writer`);
    const worker = new Worker(module, { workerData });
    const abort = () => worker.postMessage({ type: 'abort' } satisfies WriterRequest<G>);
    signal?.addEventListener('abort', abort, { once: true });
    // Listeners of our own, removed by name: a Worker has listeners of its own too.
    let onMessage: ((m: WriterReply) => void) | undefined;
    let onError: ((e: Error) => void) | undefined;
    let onExit: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onMessage = (m) => {
          if (m.type === 'standby') options.onStandby?.();
          else if (m.type === 'notice') options.onNotice?.(m.message);
          else if (m.type === 'opened') resolve();
          else if (m.type === 'openFailed') reject(fromWire(m.error));
        };
        onError = (e) => reject(fromWire(toWire(e)));
        onExit = () => reject(new WriterClosedError(`the ${name} writer thread ended while opening`));
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      });
    } catch (e) {
      await worker.terminate();
      throw e;
    } finally {
      signal?.removeEventListener('abort', abort);
      worker.off('message', onMessage!).off('error', onError!).off('exit', onExit!);
    }
    return new StoreWriter<G>(worker, name, pack, options);
  }

  async lastBlock(): Promise<CommittedBlock | undefined> {
    return (await this.call({ type: 'lastBlock' })) as CommittedBlock | undefined;
  }

  async storedBlocks(from: bigint, to: bigint): Promise<Map<bigint, StoredBlock>> {
    return (await this.call({ type: 'storedBlocks', from, to })) as Map<bigint, StoredBlock>;
  }

  newGroup(): GroupRows {
    return new GroupRows();
  }

  /**
   * Sends a group to be written after every write sent before, and resolves
   * once it is committed. It is packed now, on this thread; a group without
   * blocks is not sent. If packing it throws, its write still takes its
   * turn and fails, so that writes made behind it fail too.
   */
  async write(group: GroupRows): Promise<void> {
    let outgoing: OutgoingGroup<G> | undefined;
    let error: ReturnType<typeof toWire> | undefined;
    try {
      outgoing = this.pack(group);
      if (outgoing === undefined) return;
    } catch (e) {
      error = toWire(e);
    }
    const id = this.nextId;
    const after = this.unsettledWrite;
    this.unsettledWrite = id;
    const settled = () => {
      if (this.unsettledWrite === id) this.unsettledWrite = undefined;
    };
    const done = this.call(
      { type: 'write', group: outgoing?.group as G, after, ...(error ? { error } : {}) },
      outgoing?.transfer ?? [],
    );
    done.then(settled, settled);
    await done;
  }

  /** Resolves once nothing older than the retention's window is answered any more (at once for archive). */
  async prune(): Promise<void> {
    await this.call({ type: 'prune' });
  }

  /** Waits for the calls sent, ends the session and the thread; nothing to do once it is gone. */
  async close(): Promise<void> {
    if (this.gone) return;
    const exited = once(this.worker, 'exit');
    await this.call({ type: 'close' });
    await exited;
  }

  private call(request: DistributiveOmit<WriterCall<G>, 'id'>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  private lose(error: LedgerError): void {
    this.gone ??= error;
    for (const pending of this.waiting.values()) pending.reject(this.gone);
    this.waiting.clear();
  }
}
