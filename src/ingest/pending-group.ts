import type { Block } from '../domain/block.js';
import type { BlockGroup, CommittedBlock } from '../store/store.js';

/**
 * When completed blocks are committed. Each commit is one transaction that
 * stores whole blocks and the height of its last one, so exactly-once and
 * whole-block visibility hold whatever the group size. Grouping matters while
 * a source is behind (a file, a reconnecting core): a transaction's fixed
 * cost, mostly writing each dirtied index page to the WAL once, is shared by
 * its blocks, and the current state of an order changed in several of them is
 * written once. A live source that delivers a block and then waits has the
 * block committed as soon as the source is seen idle (`idleMs`).
 */
export interface CommitLimits {
  /** Commit once this many blocks are waiting. */
  maxBlocks: number;
  /** Commit once the waiting blocks hold this many rows (bounds memory). */
  maxRows: number;
  /** Commit once the source has delivered nothing for this long. */
  idleMs: number;
  /** Commit once the oldest waiting block has waited this long, even if the source keeps delivering. */
  maxDelayMs: number;
}

/**
 * Groups large enough that a transaction's fixed cost is spread thin, with
 * rows bounding the memory held (the sweep behind the sizes: BENCHMARKS.md,
 * "Figures behind the code"). A block caught up on is visible within
 * ~maxDelayMs plus the time to write its group; a live block within idleMs
 * plus the time to write it. idleMs must exceed the time a source takes to
 * decode one read (a 1 MiB file chunk: ~10 ms), or catching up would commit
 * after every read.
 */
export const DEFAULT_COMMIT_LIMITS: CommitLimits = { maxBlocks: 500, maxRows: 50_000, idleMs: 25, maxDelayMs: 250 };

/** One commit's worth of completed blocks, in the store's group, each with the source position of its end. */
export class PendingGroup<B extends BlockGroup> {
  private group: B;
  private blocks: CommittedBlock[] = [];
  private positions: number[] = [];
  private rows = 0;
  private firstAt = 0;

  constructor(
    private readonly newGroup: () => B,
    private readonly limits: CommitLimits,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.group = newGroup();
  }

  get size(): number {
    return this.blocks.length;
  }

  /** Adds a block; if the store refuses it, the group stays as it was. */
  add(block: Block, position: number): void {
    this.group.add(block);
    if (this.blocks.length === 0) this.firstAt = this.now();
    this.blocks.push({ height: block.height, time: block.time, chainId: block.chainId, hash: block.hash });
    this.positions.push(position);
    this.rows += block.orders.length + block.nodeSignatures.length + block.signersAdded.length + block.signersRemoved.length;
  }

  /** Milliseconds until the oldest waiting block is due; Infinity when none waits. */
  dueInMs(): number {
    return this.blocks.length === 0 ? Infinity : Math.max(0, this.firstAt + this.limits.maxDelayMs - this.now());
  }

  /** How long to wait for the source before committing what waits; Infinity when nothing waits. */
  patienceMs(): number {
    return Math.min(this.limits.idleMs, this.dueInMs());
  }

  isDue(): boolean {
    return this.blocks.length >= this.limits.maxBlocks || this.rows >= this.limits.maxRows || this.dueInMs() === 0;
  }

  /** Empties the pending group, returning the store's group and which blocks it holds. */
  take(): { group: B; blocks: CommittedBlock[]; positions: number[] } {
    const taken = { group: this.group, blocks: this.blocks, positions: this.positions };
    this.group = this.newGroup();
    this.blocks = [];
    this.positions = [];
    this.rows = 0;
    return taken;
  }
}
