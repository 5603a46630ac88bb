/**
 * Calls from a store's writer to the worker thread that holds its connection
 * (./sqlite/writer-thread.ts, ./postgres/writer-thread.ts): each request
 * carries an id, the thread answers it with a reply of the same id, and once
 * the thread is gone every call outstanding or to come fails with the reason.
 * Both writers call their thread alike; only what their requests say differs.
 */
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { SchemaVersionError } from './store.js';

/** An error as it crosses threads: its class is lost on the way, so its name says which it was. */
export interface ThreadError {
  name: string;
  message: string;
}

export function threadError(e: unknown): ThreadError {
  // A SchemaVersionError is named 'Error': its class is the only sign of it.
  if (e instanceof SchemaVersionError) return { name: 'SchemaVersionError', message: e.message };
  return e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
}

/** The error a thread reported: a SchemaVersionError again, which callers check for, else an Error of its name. */
export function errorFromThread(e: ThreadError): Error {
  if (e.name === 'SchemaVersionError') return new SchemaVersionError(e.message);
  return Object.assign(new Error(e.message), { name: e.name });
}

/** The thread's answer to the request of the same id. */
export interface ThreadReply {
  type: 'reply';
  id: number;
  value?: unknown;
  error?: ThreadError;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

export class ThreadCalls<Request extends { id: number }> {
  private readonly waiting = new Map<number, Pending>();
  private nextId = 1;
  private gone: Error | undefined;

  /** `ended`: what calls fail with once the thread exits. `toError`: a reported error as callers expect it. */
  constructor(
    private readonly worker: Worker,
    ended: string,
    toError: (e: ThreadError) => Error = errorFromThread,
  ) {
    worker.on('message', (reply: { type?: unknown }) => {
      // A thread may say other things than replies (a writer on standby, say): those are its owner's.
      if (reply.type !== 'reply') return;
      const { id, value, error } = reply as ThreadReply;
      const pending = this.waiting.get(id);
      this.waiting.delete(id);
      if (error !== undefined) pending?.reject(toError(error));
      else pending?.resolve(value);
    });
    worker.on('error', (e) => this.lose(e));
    worker.on('exit', (code) => this.lose(new Error(`${ended} (code ${code})`)));
  }

  /** Resolves with the reply's value; requests reach the thread in the order of the calls. */
  call(request: DistributiveOmit<Request, 'id'>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  /** Sends the request that ends the thread and waits for it to exit; nothing to do once it is gone. */
  async end(request: DistributiveOmit<Request, 'id'>): Promise<void> {
    if (this.gone) return;
    const exited = once(this.worker, 'exit');
    await this.call(request);
    await exited;
  }

  private lose(error: Error): void {
    this.gone ??= error;
    for (const pending of this.waiting.values()) pending.reject(this.gone);
    this.waiting.clear();
  }
}
