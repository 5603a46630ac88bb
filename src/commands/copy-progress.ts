/**
 * What `ledger-query copy` shows while it runs: on a terminal, one progress
 * line (phase, table, rows, share, rate, time left); off one, a log line as
 * each table and phase starts, so that a log shows where a copy stopped.
 */
import type { CopyProgress } from '../store/copy/copy-store.js';
import { bar, StatusLine } from '../status-line.js';

const PHASES: Record<CopyProgress['phase'], string> = { rows: 'copying', finishing: 'building indexes', checking: 'checking' };

const count = (n: number) => n.toLocaleString('en-US');

function eta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

export class CopyProgressReport {
  private readonly line: StatusLine | undefined;
  private phaseStarted = Date.now();
  private last: { phase: string; table: string | undefined } | undefined;

  constructor(private readonly out: NodeJS.WriteStream) {
    this.line = out.isTTY ? new StatusLine(out) : undefined;
  }

  update(p: CopyProgress): void {
    const changed = this.last === undefined || this.last.phase !== p.phase || this.last.table !== p.table;
    if (changed && this.last?.phase !== p.phase) this.phaseStarted = Date.now();
    this.last = { phase: p.phase, table: p.table };
    const share = p.totalRows === 0 ? 1 : p.rows / p.totalRows;
    const seconds = (Date.now() - this.phaseStarted) / 1000;
    const rate = seconds > 0 ? p.rows / seconds : 0;
    if (this.line !== undefined) {
      this.line.draw(() => {
        const what = `${PHASES[p.phase]}${p.table === undefined ? '' : ` ${p.table}`}`;
        if (p.phase === 'finishing') return `${what}...`;
        return `${bar(share)} ${(share * 100).toFixed(0)}%  ${what}: ${count(p.rows)} of ${count(p.totalRows)} rows, ` +
          `${count(Math.round(rate))} rows/s, ${eta(rate > 0 ? (p.totalRows - p.rows) / rate : Infinity)} left`;
      }, changed);
    } else if (changed) {
      const where = p.phase === 'finishing' ? '' : `: ${p.table ?? ''} (${count(p.rows)} of ${count(p.totalRows)} rows done)`;
      this.out.write(`ledger-query copy: ${PHASES[p.phase]}${where}\n`);
    }
  }

  end(): void {
    this.line?.end();
  }
}
