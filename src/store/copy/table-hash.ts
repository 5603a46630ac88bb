/**
 * A table's check: its row count and a hash of its rows, every value in the
 * neutral form (./neutral.ts) encoded one way whatever backend it came from
 * (./rows-hash.ts): for a table both sides read in key order, SHA-256 of
 * the rows in that order; for the others, a sum of each row's SHA-256, which
 * does not depend on the order rows are read in. Equal sums, equal tables as
 * multisets of rows; a table's key makes its rows distinct, so equal as
 * tables. Reading such a table in key order would send the embedded store
 * through an index, a random read per row, and PostgreSQL through a sort
 * (BENCHMARKS.md, "Copying a store").
 *
 * Rows are encoded into a chunk a megabyte at a time; a HashThread hashes
 * the chunks on a thread of its own, without one the check hashes them in place.
 */
import { Worker } from 'node:worker_threads';
import type { HashReply, HashRequest } from './hash-protocol.js';
import type { NeutralRow } from './neutral.js';
import { RowsHash } from './rows-hash.js';

const CHUNK = 1 << 20;
/** Chunks sent and not yet hashed, at most, before the reader waits: a few MB, however far hashing lags. */
const MOST_PENDING = 8;
const INT64_MIN = -(1n << 63n);
const U64_MAX = (1n << 64n) - 1n;

export interface TableCheck {
  rows: number;
  /** Hex. */
  hash: string;
}

/** The hashing thread a copy's table checks share, and how far it lags. */
export class HashThread {
  private readonly worker = new Worker(new URL('./hash-thread.js', import.meta.url));
  private pending = 0;
  private failure: Error | undefined;
  private readonly waiting: (() => void)[] = [];
  private readonly finishing = new Map<number, { resolve: (c: TableCheck) => void; reject: (e: Error) => void }>();
  private tables = 0;

  constructor() {
    this.worker.on('message', (m: HashReply) => {
      if (m.kind === 'hashed') {
        this.pending--;
        if (this.pending < MOST_PENDING) for (const wake of this.waiting.splice(0)) wake();
      } else {
        this.finishing.get(m.table)?.resolve({ rows: m.rows, hash: m.hash });
        this.finishing.delete(m.table);
      }
    });
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', () => this.fail(new Error('the hashing thread ended')));
  }

  /** A new table's check, hashed on this thread; `ordered`: its rows come in key order on both sides. */
  table(ordered: boolean): TableHash {
    return new TableHash(ordered, this, this.tables++);
  }

  send(request: HashRequest, transfer: ArrayBuffer[] = []): void {
    if (this.failure !== undefined) throw this.failure;
    if (request.kind === 'chunk') this.pending++;
    this.worker.postMessage(request, transfer);
  }

  /** Resolves once the thread has caught up enough to take more chunks. */
  async ready(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (this.pending < MOST_PENDING) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.failure !== undefined) throw this.failure;
  }

  finished(table: number, ordered: boolean): Promise<TableCheck> {
    return new Promise((resolve, reject) => {
      if (this.failure !== undefined) return reject(this.failure);
      this.finishing.set(table, { resolve, reject });
      this.send({ kind: 'finish', table, ordered });
    });
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const wake of this.waiting.splice(0)) wake();
    for (const f of this.finishing.values()) f.reject(this.failure);
    this.finishing.clear();
  }
}

export class TableHash {
  /** Where rows are hashed without a thread. */
  private readonly inPlace: RowsHash | undefined;
  private buffer = Buffer.allocUnsafeSlow(CHUNK);
  private view = new DataView(this.buffer.buffer);
  private ends = new Uint32Array(16_384);
  private at = 0;
  /** Where the row being encoded starts: a row never spans two chunks. */
  private rowStart = 0;
  private rowsInChunk = 0;
  private rows = 0;

  /** Without a thread, rows are hashed in place, a chunk at a time. */
  constructor(private readonly ordered: boolean, private readonly thread?: HashThread, private readonly id = 0) {
    this.inPlace = thread === undefined ? new RowsHash(ordered) : undefined;
  }

  /**
   * Tags tell the kinds apart and lengths frame each value: null 0; an
   * integer 1 and 16 bytes (two's complement, big-endian: every u64 and int64
   * fits); text 2, its UTF-8 length (4 bytes) and bytes; bytes 3, length and bytes.
   */
  add(row: NeutralRow): void {
    this.rowStart = this.at;
    for (const v of row) {
      if (v === null) {
        this.room(1);
        this.buffer[this.at++] = 0;
      } else if (typeof v === 'number') {
        // As the bigint of the same value: the sign in the high word, two's complement below.
        this.room(17);
        this.buffer[this.at] = 1;
        const sign = v < 0 ? -1 : 0;
        this.view.setInt32(this.at + 1, sign);
        this.view.setInt32(this.at + 5, sign);
        this.view.setUint32(this.at + 9, Math.floor(v / 2 ** 32) >>> 0);
        this.view.setUint32(this.at + 13, v >>> 0);
        this.at += 17;
      } else if (typeof v === 'bigint') {
        this.room(17);
        this.buffer[this.at] = 1;
        if (v >= 0n && v <= U64_MAX) {
          // Nearly every value: no sign word to work out, no wrapped copy to allocate.
          this.view.setBigUint64(this.at + 1, 0n);
          this.view.setBigUint64(this.at + 9, v);
        } else {
          this.view.setBigInt64(this.at + 1, v < 0n && v >= INT64_MIN ? -1n : v >> 64n);
          this.view.setBigUint64(this.at + 9, BigInt.asUintN(64, v));
        }
        this.at += 17;
      } else if (typeof v === 'string') {
        this.room(5 + 3 * v.length);
        this.buffer[this.at] = 2;
        const n = this.buffer.write(v, this.at + 5, 'utf8');
        this.view.setUint32(this.at + 1, n);
        this.at += 5 + n;
      } else {
        this.room(5 + v.byteLength);
        this.buffer[this.at] = 3;
        this.view.setUint32(this.at + 1, v.byteLength);
        this.buffer.set(v, this.at + 5);
        this.at += 5 + v.byteLength;
      }
    }
    if (this.rowsInChunk === this.ends.length) {
      const grown = new Uint32Array(2 * this.ends.length);
      grown.set(this.ends);
      this.ends = grown;
    }
    this.ends[this.rowsInChunk++] = this.at;
    this.rows++;
  }

  /** Resolves when more rows may be added without hashing falling further behind. */
  ready(): Promise<void> {
    return this.thread?.ready() ?? Promise.resolve();
  }

  async finish(): Promise<TableCheck> {
    this.flush(this.at);
    if (this.inPlace !== undefined) return { rows: this.rows, hash: this.inPlace.finish() };
    return this.thread!.finished(this.id, this.ordered);
  }

  /** Hashes the chunk's whole rows, those before `end`: in place, or sent to the thread (the chunk goes with the message). */
  private flush(end: number): void {
    const rows = this.rowsInChunk;
    this.rowsInChunk = 0;
    if (rows === 0) return;
    if (this.inPlace !== undefined) return this.inPlace.add(this.buffer, this.ends, rows);
    const chunk = this.buffer.buffer as ArrayBuffer;
    const ends = this.ends.buffer as ArrayBuffer;
    // Its length read before it goes: a sent array is left empty.
    const room = this.ends.length;
    this.thread!.send({ kind: 'chunk', table: this.id, ordered: this.ordered, chunk, bytes: end, ends, rows }, [chunk, ends]);
    this.ends = new Uint32Array(room);
  }

  /** Makes room for `bytes` more of the row being encoded: the whole rows before it are hashed, and it moves to a new chunk. */
  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const partial = this.at - this.rowStart;
    const next = Buffer.allocUnsafeSlow(Math.max(CHUNK, partial + bytes));
    // Copied before the chunk is sent away.
    this.buffer.copy(next, 0, this.rowStart, this.at);
    this.flush(this.rowStart);
    this.buffer = next;
    this.view = new DataView(next.buffer);
    this.at = partial;
    this.rowStart = 0;
  }
}
