/**
 * A copy's check of an embedded store read on a thread of its own
 * (./copy-check-thread.ts). A source's, while the copy's thread reads the
 * target back: its connection must read the snapshot the copy copied, so
 * both begin their read transactions between two reads of the source's
 * WAL-index headers (./wal-index.ts); equal headers mean that no commit
 * fell between, so both read the same frames of the WAL. Else both begin
 * again. A target's, while the copy's thread builds its indexes: its rows
 * are committed and nothing writes them, so it needs no snapshot.
 */
import { closeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fromWire } from '../../errors.js';
import type { AsideChecks } from '../copy/contract.js';
import type { CheckReply, CheckRequest } from './copy-check-protocol.js';
import { openShm, readWalIndexHeaders, WAL_INDEX_HEADERS_BYTES } from './wal-index.js';

/** Tries to begin both snapshots between equal headers; a writer commits a few times a second, each try takes a millisecond. */
const TRIES = 20;

type Check = { rows: number; hash: string };

class CheckThread {
  private readonly worker: Worker;
  private next: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private readonly tables = new Map<string, { resolve: (c: Check) => void; reject: (e: Error) => void }>();
  private failure: Error | undefined;

  constructor(path: string) {
    this.worker = new Worker(new URL('./copy-check-thread.js', import.meta.url), { workerData: { path } });
    this.worker.on('message', (m: CheckReply) => {
      if (m.kind === 'begun') this.settle();
      else if (m.kind === 'checked') {
        this.tables.get(m.table)?.resolve({ rows: m.rows, hash: m.hash });
        this.tables.delete(m.table);
      } else this.fail(fromWire(m.error));
    });
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', () => this.fail(new Error('the check thread ended')));
  }

  begin(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.failure !== undefined) return reject(this.failure);
      this.next = { resolve, reject };
      this.send({ kind: 'begin' });
    });
  }

  start: AsideChecks['start'] = (tables) => {
    const checks = new Map<string, Promise<Check>>();
    for (const { shape } of tables) {
      const check = new Promise<Check>((resolve, reject) => {
        if (this.failure !== undefined) return reject(this.failure);
        this.tables.set(shape.name, { resolve, reject });
      });
      // Awaited when the target's table is checked; a failure before then is the copy's anyway.
      check.catch(() => undefined);
      checks.set(shape.name, check);
    }
    this.send({ kind: 'hash', tables: [...tables] });
    return checks;
  };

  close = async (): Promise<void> => {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  };

  private send(m: CheckRequest): void {
    this.worker.postMessage(m);
  }

  private settle(): void {
    this.next?.resolve();
    this.next = undefined;
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.next?.reject(this.failure);
    this.next = undefined;
    for (const t of this.tables.values()) t.reject(this.failure);
    this.tables.clear();
  }
}

/** A check thread on the target `path`, whose rows are all committed and written no more. */
export function targetCheckThread(path: string): AsideChecks {
  return new CheckThread(path);
}

/**
 * A check thread on `path` whose snapshot is the one `begin` starts (the
 * copy's own connection's), or undefined if no try saw the headers still:
 * then `begin` has begun the copy's snapshot, and the check reads it itself.
 */
export async function checkAside(path: string, begin: () => void, rollback: () => void): Promise<AsideChecks | undefined> {
  const shm = openShm(path);
  if (shm === null) {
    // No WAL index (not in WAL mode): nothing proves two snapshots the same.
    begin();
    return undefined;
  }
  const thread = new CheckThread(path);
  try {
    const before = Buffer.alloc(WAL_INDEX_HEADERS_BYTES);
    const after = Buffer.alloc(WAL_INDEX_HEADERS_BYTES);
    for (let i = 0; i < TRIES; i++) {
      if (!readWalIndexHeaders(shm, before)) break;
      begin();
      await thread.begin();
      if (readWalIndexHeaders(shm, after) && after.equals(before)) return thread;
      rollback();
    }
    await thread.close();
    begin();
    return undefined;
  } catch (e) {
    await thread.close();
    throw e;
  } finally {
    closeSync(shm);
  }
}
