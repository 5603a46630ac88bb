/**
 * A copy's pace (docs/architecture.md): at most `rowsPerSecond` rows a
 * second, worked through in slices of 10 ms of the rate, the copy waiting
 * after a slice that got ahead.
 * Priority alone does not hold the source's readers to their pace: on a
 * machine whose cores the source's server keeps busy, its page p99 beside a
 * copy grew with the share of time the copy ran, at nice 10, 19 or
 * SCHED_IDLE alike (BENCHMARKS.md, "A copy's pace").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortError } from '../../errors.js';

/** How long a slice of work between waits lasts at most, at the pace's rate. */
const SLICE_MS = 10;

export class Pace {
  /** Rows a copy works through between waits: SLICE_MS of the rate. */
  readonly sliceRows: number;
  private started: number | undefined;
  private rows = 0;

  constructor(
    private readonly rowsPerSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<unknown> = (ms, signal) => sleep(ms, undefined, { signal }),
  ) {
    this.sliceRows = Math.max(1, Math.round((rowsPerSecond * SLICE_MS) / 1000));
  }

  /** Counts `n` rows just read, and waits until the pace has room for them. */
  async took(n: number, signal?: AbortSignal): Promise<void> {
    const now = this.now();
    this.started ??= now;
    this.rows += n;
    const due = this.started + (this.rows / this.rowsPerSecond) * 1000;
    if (due <= now) return;
    try {
      await this.wait(due - now, signal);
    } catch (e) {
      if (signal?.aborted) throw new AbortError('stopped on request');
      throw e;
    }
  }
}
