/**
 * What an operator should know that stops nothing (a migration's progress,
 * WriterOptions.onNotice), and where it goes when its caller has no better
 * place: a line of the process's standard error.
 */
export function sayOnStderr(message: string): void {
  process.stderr.write(`ledger-query: ${message}\n`);
}

/** Lines of a long step's progress: at most one every PROGRESS_EVERY_MS between those said at once. */
const PROGRESS_EVERY_MS = 2000;

export class ProgressLines {
  private said = performance.now();

  constructor(private readonly notice: (message: string) => void) {}

  /** Says `message` now. */
  say(message: string): void {
    this.said = performance.now();
    this.notice(message);
  }

  /** Says `message()` if the last line was said PROGRESS_EVERY_MS ago or more, or if `now`. */
  sayEvery(message: () => string, now = false): void {
    if (now || performance.now() - this.said >= PROGRESS_EVERY_MS) this.say(message());
  }
}
