/**
 * Retention: how much of the network's past a store keeps. `archive` keeps
 * everything; a window keeps what is younger than a span of network time
 * (block timestamps, never the wall clock, so that a replay prunes as the
 * live run did). The rules of what a window keeps: docs/compatibility.md,
 * section 13. No I/O.
 */

export type Retention =
  | { kind: 'archive' }
  /** `name` as an operator wrote it (`standard`, `30d`); `ns` the window in nanoseconds, above 0. */
  | { kind: 'window'; name: string; ns: bigint };

const NS_PER_SECOND = 1_000_000_000n;
const UNIT_SECONDS = { s: 1n, m: 60n, h: 3600n, d: 86_400n } as const;

/** The original's presets (its `standard` keeps orders a month, `lite` a day); a month is 30 days. */
export const RETENTION_PRESETS = { standard: '30d', lite: '1d' } as const;

export const ARCHIVE: Retention = { kind: 'archive' };

/** What the setting takes, for help and refusals. */
export const RETENTION_HELP = 'archive, standard (30d), lite (1d), or a duration of network time: 30d, 12h, 5m, 300s';

/** The longest window taken: a thousand years, far inside an int64 of nanoseconds. */
const MAX_SECONDS = 1000n * 365n * 86_400n;

/** The retention a text names; undefined for anything else (0, -1d, forever, 1x). */
export function parseRetention(text: string): Retention | undefined {
  if (text === 'archive') return ARCHIVE;
  const preset = RETENTION_PRESETS[text as keyof typeof RETENTION_PRESETS];
  const m = /^([0-9]{1,15})([smhd])$/.exec(preset ?? text);
  if (m === null) return undefined;
  const seconds = BigInt(m[1]!) * UNIT_SECONDS[m[2] as keyof typeof UNIT_SECONDS];
  if (seconds <= 0n || seconds > MAX_SECONDS) return undefined;
  return { kind: 'window', name: text, ns: seconds * NS_PER_SECOND };
}

/** A window in the largest unit that divides it: 2592000 s -> `30d`; for messages and the stored setting. */
export function windowText(ns: bigint): string {
  const seconds = ns / NS_PER_SECOND;
  for (const [unit, size] of [['d', 86_400n], ['h', 3600n], ['m', 60n]] as const) {
    if (seconds % size === 0n) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/** The retention as `ledger-query config` prints it and the config file takes it. */
export function retentionText(r: Retention): string {
  return r.kind === 'archive' ? 'archive' : r.name;
}

/**
 * The time before which a block is older than the window, given the latest
 * stored block's time: a block is older than W when its time is more than W
 * before the latest block's.
 */
export function cutoffTime(latestTime: bigint, windowNs: bigint): bigint {
  return latestTime - windowNs;
}

/** What a store reports of its retention: the status endpoint and the metrics. */
export interface RetentionStatus {
  /** What the store's writer was last started with: `archive`, `standard`, `30d`. */
  retention: string;
  /** The window the store was last pruned with (`5m`); absent if it never was. */
  prunedWith?: string;
  /** The oldest block whose history is whole: every change from it on is kept. Undefined before any block. */
  oldestKeptBlock?: { height: bigint; time: bigint };
  /** History and current rows pruned, since the store was created. */
  rowsPruned: bigint;
  /** Writer time spent pruning, since the store was created. */
  pruneSeconds: number;
  /** The longest prune batch, in seconds, since the store was created. */
  longestBatchSeconds: number;
  /** Bytes the store takes on disk (the embedded store's files; PostgreSQL's database). */
  storeBytes: number;
}
