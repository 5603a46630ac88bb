import type { Random } from './random.js';

const NANOS_PER_MICRO = 1000;

/** A 32-bit integer hash (the finaliser of murmur3): spreads consecutive indexes over [0, 2^32). */
function mix32(n: number): number {
  let h = n >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The times of the chain's blocks. A real chain's blocks do not start on
 * whole seconds: each block here starts at its nominal time (start + index *
 * interval) plus a jitter below a quarter of the interval, so block times, and
 * every time derived from them, carry nanosecond digits. The jitter is a pure
 * function of the index, so both halves of the network (orders, validators)
 * agree on every block's time without sharing state, and times still grow
 * strictly from block to block.
 */
export class BlockTimes {
  private readonly jitterSpan: number;

  constructor(private readonly start: bigint, private readonly interval: bigint) {
    this.jitterSpan = Number(interval / 4n);
  }

  /** The time of block `index` (0-based). */
  at(index: number): bigint {
    const jitter = Math.floor((mix32(index + 0x5bd1e995) / 0x1_0000_0000) * this.jitterSpan);
    return this.start + BigInt(index) * this.interval + BigInt(jitter);
  }
}

/**
 * Hands out increasing times inside one block, so that the orders of a block
 * get distinct createdAt/updatedAt values that never reach the next block's
 * time. Offsets are kept as plain numbers (an interval is far below 2^53 ns)
 * and turned into bigints only when an event needs one.
 */
export class BlockClock {
  private base = 0n;
  /** The base's position inside its microsecond (0..999), to find microsecond boundaries. */
  private baseInMicro = 0;
  private offset = 0;
  private last = 0;
  private readonly meanStep: number;
  /** Counts ticks, so a caller can tell whether anything ticked since it last looked. */
  ticks = 0;

  constructor(
    private readonly rng: Random,
    intervalNs: bigint,
    expectedEventsPerBlock: number,
  ) {
    const interval = Number(intervalNs);
    // Use roughly the first half of the block on average; the cap keeps
    // busier-than-expected blocks inside the block.
    this.meanStep = Math.max(1, Math.floor(interval / Math.max(1, 2 * expectedEventsPerBlock)));
  }

  /** A new block at `time`; every moment handed out stays below `next`, the next block's time. */
  startBlock(time: bigint, next: bigint): void {
    this.base = time;
    this.baseInMicro = Number(((time % 1000n) + 1000n) % 1000n);
    this.offset = 0;
    this.last = Math.max(0, Number(next - time) - 1);
    this.ticks++;
  }

  /** The block's own time, for things the network does at the block boundary (expiries). */
  get blockTime(): bigint {
    return this.base;
  }

  /** The next moment in this block, strictly after the previous one while room is left. */
  tick(): bigint {
    const step = 1 + this.rng.int(2 * this.meanStep);
    this.offset = Math.min(this.last, this.offset + step);
    this.ticks++;
    return this.base + BigInt(this.offset);
  }

  /**
   * A moment a few nanoseconds after the previous one, in the same
   * microsecond: once times are kept in whole microseconds (as the original
   * keeps them) the two tie. A plain tick when that microsecond is used up.
   */
  tickSameMicro(): bigint {
    const room = Math.min(NANOS_PER_MICRO - 1 - ((this.baseInMicro + this.offset) % NANOS_PER_MICRO), this.last - this.offset);
    if (room < 1) return this.tick();
    this.offset += 1 + this.rng.int(room);
    this.ticks++;
    return this.base + BigInt(this.offset);
  }
}
