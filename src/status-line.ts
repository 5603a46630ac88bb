/** One line of progress on a terminal, redrawn in place at most five times a second. */

/** Redraws more often than this are skipped (but a forced one). */
const REDRAW_MS = 200;

export class StatusLine {
  private lastDraw = -Infinity;
  private drawn = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly now: () => number = Date.now,
  ) {}

  /** Shows `line` in place of the last one, unless one was drawn within REDRAW_MS; returns whether it drew. */
  draw(line: () => string, force = false): boolean {
    const now = this.now();
    if (!force && now - this.lastDraw < REDRAW_MS) return false;
    this.lastDraw = now;
    this.out.write(`\r\x1b[K${line()}`);
    this.drawn = true;
    return true;
  }

  /** Leaves the terminal on a fresh line. */
  end(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}

/** `[####....]` for a fraction from 0 to 1. */
export function bar(fraction: number, width = 24): string {
  const full = Math.round(Math.min(Math.max(fraction, 0), 1) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}
