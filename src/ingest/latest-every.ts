/**
 * Sends the latest of a stream of values at most once per interval, and
 * always the last one of a burst once the interval has passed: how the
 * ingest thread reports progress without a message per block.
 */
export class LatestEvery<T> {
  private latest: T | undefined;
  private sentAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number, private readonly send: (value: T) => void, private readonly now: () => number = Date.now) {}

  offer(value: T): void {
    this.latest = value;
    const wait = this.intervalMs - (this.now() - this.sentAt);
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  /**
   * Nothing more is sent after this. The timer is cleared wherever it was
   * set: one left pending when a value went out at once sent a stale value
   * after the thread's last word ('done'), and the thread was taken for one
   * that had vanished (test/ingest/latest-every.test.ts).
   */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.latest = undefined;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sentAt = this.now();
    if (this.latest !== undefined) this.send(this.latest);
    this.latest = undefined;
  }
}
