/**
 * What every fuzz test shares: one seed per run, printed, and overridable to
 * reproduce a failure (FUZZ_SEED=<n>); run counts scaled by FUZZ_SCALE; and a
 * time limit on each run, so that a hang fails the test instead of stalling it.
 */
import type { TestContext } from 'node:test';

const DEFAULT_SEED = 20_261_125;

/** The seed of this run: FUZZ_SEED if set, else a fixed one. Printed in the test's output. */
export function fuzzSeed(t: Pick<TestContext, 'diagnostic'>): number {
  const given = process.env.FUZZ_SEED;
  const seed = given === undefined || given === '' ? DEFAULT_SEED : Number(given);
  if (!Number.isSafeInteger(seed)) throw new TypeError(`FUZZ_SEED=${JSON.stringify(given)}: not an integer`);
  t.diagnostic(`seed ${seed} (reproduce with FUZZ_SEED=${seed})`);
  return seed;
}

/** `runs` times FUZZ_SCALE (default 1), at least 1: more runs for a long local hunt, fewer for a quick look. */
export function fuzzRuns(runs: number): number {
  const scale = Number(process.env.FUZZ_SCALE ?? 1);
  return Math.max(1, Math.round(runs * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

export class TimedOut extends Error {}

/** `promise`, or a TimedOut rejection after `ms`: a hang becomes a failure naming `what`. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`${what}: no end within ${ms} ms (a hang)`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts by label, printed as `label: n` sorted by label. */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(label: string, n = 1): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + n);
  }

  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  toString(): string {
    return [...this.counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, n]) => `${k}: ${n}`).join(', ');
  }
}
