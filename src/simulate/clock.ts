import type { Random } from './random.js';

/**
 * Hands out increasing times inside one block, so that the orders of a block
 * get distinct createdAt/updatedAt values that never reach the next block's
 * time. Offsets are kept as plain numbers (an interval is far below 2^53 ns)
 * and turned into bigints only when an event needs one.
 */
export class BlockClock {
  private base = 0n;
  private offset = 0;
  private readonly last: number;
  private readonly meanStep: number;

  constructor(
    private readonly rng: Random,
    intervalNs: bigint,
    expectedEventsPerBlock: number,
  ) {
    const interval = Number(intervalNs);
    this.last = Math.max(0, interval - 1);
    // Use roughly the first half of the block on average; the cap keeps
    // busier-than-expected blocks inside the interval.
    this.meanStep = Math.max(1, Math.floor(interval / Math.max(1, 2 * expectedEventsPerBlock)));
  }

  startBlock(time: bigint): void {
    this.base = time;
    this.offset = 0;
  }

  /** The block's own time, for things the network does at the block boundary (expiries). */
  get blockTime(): bigint {
    return this.base;
  }

  /** The next moment in this block, strictly after the previous one while room is left. */
  tick(): bigint {
    const step = 1 + this.rng.int(2 * this.meanStep);
    this.offset = Math.min(this.last, this.offset + step);
    return this.base + BigInt(this.offset);
  }
}
