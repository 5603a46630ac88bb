/**
 * When the writer thread prunes (../writer-protocol.ts runs it): in bounded
 * batches between groups, never inside one. Each batch is one transaction
 * sized to take about its clock's BATCH_TARGET_MS of the writer's time, so
 * that a live block arriving meanwhile waits at most that long. Where the
 * batch's work runs on the writer thread (the embedded store), its time is
 * the thread's CPU time: on a loaded machine wall time is mostly the wait
 * for a core, and sizing by it shrank batches to their floor (BENCHMARKS.md,
 * "Retention"). While a catch-up keeps
 * groups coming, pruning gets as much time after each group as the group's
 * write took, so that it keeps up with any rate ingestion keeps up with;
 * while the writer is idle, it prunes batch after batch until nothing older
 * than the window is left.
 */

/** What one batch did. */
export interface PruneBatch {
  /** History and current rows pruned. */
  rows: number;
  /** Whether more is left to prune now. */
  more: boolean;
  /**
   * What is left waits for readers (PostgreSQL: a partition to drop while a
   * query holds it): everything answered is pruned already, and the rest is
   * tried again after BLOCKED_RETRY_MS rather than at once.
   */
  blocked?: boolean;
}

/** How long pruning waits when readers are in its way. */
export const BLOCKED_RETRY_MS = 1000;

/** Milliseconds of CPU this thread has used (the embedded store's pruning runs on it whole). */
export function threadCpuMs(): number {
  const usage = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** A backend's pruning: one batch of at most about `maxRows` rows, in one transaction. */
export type PruneStep = (maxRows: number) => PruneBatch | Promise<PruneBatch>;

/** What a batch's time is measured by: the thread's CPU where its work runs on the thread, else wall time. */
export type BatchClock = 'threadCpu' | 'wall';

/**
 * A batch's target by its clock; the bound is 50 ms, and a batch's
 * time varies around the estimate. By the thread's CPU (the embedded store)
 * not less than 35 ms: a batch's first ~20 ms go to index pages any batch
 * dirties. By wall time (PostgreSQL) 20 ms: that time includes the wait for
 * the server's cores, and batches sized to 35 ms had a p99 of twice that
 * and single ones past 100 ms (BENCHMARKS.md, "Retention").
 */
export const BATCH_TARGET_MS: Readonly<Record<BatchClock, number>> = { threadCpu: 35, wall: 20 };
/** At least this many rows a batch: a batch's fixed cost (finding where it ends, the retention row) is a few small reads. */
export const MIN_ROWS = 500;
/** At most this many: a batch measured by CPU still holds the write lock for its wall time, and a core may be slow to come. */
export const MAX_ROWS = 20_000;

export class PruneTurns {
  /** Rows per batch, adapted to the time batches take. */
  private rows = 1000;
  /** Whether a batch may have something to prune: set by every write, cleared when a batch finds nothing more. */
  private due = true;
  /** Milliseconds of pruning owed before the next request is served. */
  private credit = 0;
  /** No batch before this time (performance.now()): something was in the way. */
  private notBefore = 0;

  constructor(
    private readonly step: PruneStep,
    private readonly onFailure: (e: unknown) => void,
    /**
     * Told of each batch that pruned something: its rows, its milliseconds,
     * commit included, and the milliseconds of this thread's CPU it took.
     */
    private readonly onBatch: (rows: number, ms: number, cpuMs: number) => void = () => {},
    private readonly now: () => number = () => performance.now(),
    private readonly cpuNow: () => number = threadCpuMs,
    private readonly clock: BatchClock = 'wall',
  ) {}

  /** A group was written in `ms`, `cpuMs` of them this thread's: it owes that much pruning, by the batches' clock, before the next request. */
  wrote(ms: number, cpuMs: number): void {
    this.due = true;
    // At least one batch's time: a small group's write is quicker than one batch.
    this.credit = Math.max(this.byClock(ms, cpuMs), BATCH_TARGET_MS[this.clock]);
  }

  /** Of a stretch's wall and CPU milliseconds, the one batches are measured by. */
  private byClock(ms: number, cpuMs: number): number {
    return this.clock === 'threadCpu' ? cpuMs : ms;
  }

  /** Whether a batch should run now; `waiting` requests limit it to the credit a write left. */
  wanted(waiting: boolean): boolean {
    if (!this.due || this.now() < this.notBefore) return false;
    return !waiting || this.credit > 0;
  }

  /** When an idle writer should look again, in ms; undefined when nothing is due. */
  nextInMs(): number | undefined {
    if (!this.due) return undefined;
    return Math.max(0, this.notBefore - this.now());
  }

  /** One batch; a failure is reported and pruning waits for the next write. */
  async batch(): Promise<void> {
    const started = this.now();
    const cpu = this.cpuNow();
    let done: PruneBatch;
    try {
      done = await this.step(this.rows);
    } catch (e) {
      this.due = false;
      this.credit = 0;
      this.onFailure(e);
      return;
    }
    const ms = this.now() - started;
    const cpuMs = this.cpuNow() - cpu;
    if (done.rows > 0) this.onBatch(done.rows, ms, cpuMs);
    const took = this.byClock(ms, cpuMs);
    this.credit -= took;
    this.due = done.more;
    if (done.blocked === true) this.notBefore = this.now() + BLOCKED_RETRY_MS;
    if (done.rows > 0 && took > 0) {
      const fitted = Math.round((this.rows * BATCH_TARGET_MS[this.clock]) / took);
      // A batch that reached the window's edge did less than it was sized for: its time says how to shrink, never to grow.
      const most = done.more ? 2 * this.rows : this.rows;
      // Halving or doubling at most: one slow batch (a checkpoint) must not shrink the next ones to nothing.
      this.rows = Math.round(Math.min(MAX_ROWS, Math.max(MIN_ROWS, Math.min(most, Math.max(this.rows / 2, fitted)))));
    }
  }

  /**
   * Batches until nothing older than the window is answered any more (what
   * waits for readers is left to later turns); throws what a batch throws.
   */
  async all(): Promise<void> {
    for (;;) {
      const started = this.now();
      const cpu = this.cpuNow();
      const done = await this.step(this.rows);
      if (done.rows > 0) this.onBatch(done.rows, this.now() - started, this.cpuNow() - cpu);
      if (!done.more || done.blocked === true) break;
    }
  }
}
