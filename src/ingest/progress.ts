import { bar, StatusLine } from '../status-line.js';
import type { IngestStats } from './ingester.js';

/**
 * The ETA is shown only once the rate is known, over at least this long and
 * this share of the file since the first block was stored: the store's
 * opening and a gzip file's check are not ingestion.
 */
const ETA_MIN_SECONDS = 3;
const ETA_MIN_FRACTION = 0.01;

export interface ProgressOptions {
  /** Redraw one line (a terminal), else a log line every few seconds; default: whether `out` is a terminal. */
  interactive?: boolean;
  /** The clock, in ms (tests). */
  now?: () => number;
}

/** Reports ingestion progress: a redrawn status line on a terminal, a log line every few seconds otherwise. */
export class ProgressReporter {
  private readonly now: () => number;
  private readonly started: number;
  private readonly interactive: boolean;
  private readonly line: StatusLine;
  private lastLog = -Infinity;
  /** The first update: where the rate is measured from. */
  private first: { at: number; position: number } | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    /** Total bytes of the source, when known (plain files), for percentage and ETA. */
    private readonly totalBytes?: number,
    options: ProgressOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.interactive = options.interactive ?? out.isTTY === true;
    this.line = new StatusLine(out, this.now);
  }

  update(stats: IngestStats, position: number, force = false): void {
    const now = this.now();
    this.first ??= { at: now, position };
    if (this.interactive) {
      this.line.draw(() => this.describe(stats, position, now), force);
    } else if (force || now - this.lastLog >= 5000) {
      this.lastLog = now;
      this.out.write(`${new Date(now).toISOString()} ingest ${stats.source}: ${this.describe(stats, position, now)}\n`);
    }
  }

  private describe(stats: IngestStats, position: number, now: number): string {
    const secs = Math.max((now - this.started) / 1000, 0.001);
    const parts = [
      `${fmt(stats.events)} events`,
      `${fmt(stats.blocksCommitted)} blocks`,
      `${fmt(Math.round(stats.events / secs))} events/s`,
    ];
    if (stats.lastBlock) parts.push(`height ${stats.lastBlock.height}`);
    if (this.totalBytes) {
      const done = Math.min(position / this.totalBytes, 1);
      parts.unshift(this.interactive ? `${bar(done)} ${(done * 100).toFixed(0)}%` : `${(done * 100).toFixed(0)}%`);
      const eta = this.eta(position, now);
      if (eta !== undefined) parts.push(`ETA ${duration(eta)}`);
    }
    return parts.join('  ');
  }

  /** Seconds left at the rate since the first update, once it is known (ETA_MIN_*); else undefined. */
  private eta(position: number, now: number): number | undefined {
    if (this.first === undefined || this.totalBytes === undefined) return undefined;
    const seconds = (now - this.first.at) / 1000;
    const bytes = position - this.first.position;
    if (seconds < ETA_MIN_SECONDS || bytes < ETA_MIN_FRACTION * this.totalBytes) return undefined;
    return Math.max(this.totalBytes - position, 0) / (bytes / seconds);
  }

  /** Leaves the terminal on a fresh line. */
  end(): void {
    this.line.end();
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** 42 s, 3 min 20 s, 2 h 05 min. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  const minutes = Math.floor(s / 60) % 60;
  return `${Math.floor(s / 3600)} h ${String(minutes).padStart(2, '0')} min`;
}
