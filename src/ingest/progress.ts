import type { IngestStats } from './ingester.js';

/** Reports ingestion progress: a redrawn status line on a terminal, a log line every few seconds otherwise. */
export class ProgressReporter {
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly out: NodeJS.WriteStream,
    /** Total bytes of the source, when known (files), for percentage and ETA. */
    private readonly totalBytes?: number,
    private readonly interactive = out.isTTY === true,
  ) {}

  update(stats: IngestStats, position: number, force = false): void {
    const now = Date.now();
    if (!force && now - this.lastDraw < (this.interactive ? 200 : 5000)) return;
    this.lastDraw = now;
    const secs = Math.max((now - this.started) / 1000, 0.001);
    const rate = stats.events / secs;
    const parts = [
      `${fmt(stats.events)} events`,
      `${fmt(stats.blocksCommitted)} blocks`,
      `${fmt(Math.round(rate))} events/s`,
    ];
    if (stats.lastBlock) parts.push(`height ${stats.lastBlock.height}`);
    if (this.totalBytes) {
      const done = Math.min(position / this.totalBytes, 1);
      const eta = done > 0 ? (secs / done) * (1 - done) : NaN;
      parts.unshift(this.interactive ? `${bar(done)} ${(done * 100).toFixed(0)}%` : `${(done * 100).toFixed(0)}%`);
      if (Number.isFinite(eta)) parts.push(`ETA ${eta.toFixed(0)} s`);
    }
    const line = parts.join('  ');
    if (this.interactive) {
      this.out.write(`\r\x1b[K${line}`);
      this.drawn = true;
    } else {
      this.out.write(`${new Date(now).toISOString()} ingest ${stats.source}: ${line}\n`);
    }
  }

  /** Leaves the terminal on a fresh line. */
  end(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

function bar(fraction: number, width = 24): string {
  const full = Math.round(fraction * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}
