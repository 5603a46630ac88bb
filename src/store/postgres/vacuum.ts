/**
 * The writer's vacuum: the writer vacuums the tables pruning deletes from
 * itself, on a session of its own, once FLOOR + SHARE of orders_current's
 * rows have died since the last time: the current state of each order
 * pruning forgot, and the replaced row of each order a group updated.
 * Autovacuum is asked to vacuum them sooner than by default (migration 6,
 * ./schema.ts), but looks only every autovacuum_naptime (a minute by
 * default): while a store catches up hours of network time a minute, the
 * window turned over several times between its visits, and orders_current
 * grew by its dead rows window after window (BENCHMARKS.md, "The writer's
 * vacuum"). The counts are the writer's own, not the server's statistics,
 * which reach other sessions up to ten seconds after an idle writer's last
 * transaction.
 *
 * One vacuum at a time, never on the writer's session (VACUUM cannot run
 * in a transaction; its lock lets reads and writes through). A failure is
 * said once a session, and the next count tries again; autovacuum still
 * comes in its own time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { cancelStatement, connectCancellable, type CancellableSession } from './connection.js';

/** The tables a prune batch deletes from (./prune-batch-sql.ts): orders_current, and the two small ones with it. */
export const VACUUMED = ['orders_current', 'orders_history_resting', 'blocks'];
/**
 * Dead rows that make a vacuum due: FLOOR + SHARE of orders_current's rows.
 * A count of forgotten orders alone left out every row an update replaced:
 * a catch-up that amends resting orders, forgetting few, never made a
 * vacuum due (BENCHMARKS.md, "Dead rows counted, not forgotten orders").
 */
const FLOOR = 1000;
const SHARE = 0.1;
/** The writer's vacuum yields as autovacuum's does by default: a core of two taken whole lengthened the prune batches beside it. */
const COST_DELAY = '2ms';
/**
 * With no parallel workers: VACUUM starts one per index past
 * min_parallel_index_scan_size, and those processes took the cores the
 * prune batches beside needed, while orders_current grew window after
 * window (BENCHMARKS.md, "The writer's vacuum on one core").
 */
const VACUUM_STATEMENT = `VACUUM (PARALLEL 0) ${VACUUMED.join(', ')}`;
/** How long closing waits for a cancelled vacuum to end. */
const CANCEL_WAIT_MS = 5000;
/**
 * Dead rows owed, in due counts, that make the writer wait for the vacuum
 * under way (keepUp). A catch-up forgets and inserts thousands of orders a
 * second; a vacuum that ran 2.4 s where most take 0.3 let 38,000 rows die
 * unvacuumed, and the inserts meanwhile grew orders_current by a quarter
 * for good (BENCHMARKS.md, "Dead rows counted, not forgotten orders").
 */
const BEHIND = 2;
/** The longest the writer waits: an autovacuum against wraparound holds the table's vacuum lock, and is not cancelled for ours. */
const KEEP_UP_WAIT_MS = 1000;

export class WriterVacuum {
  private session: CancellableSession | undefined;
  private running: Promise<void> | undefined;
  /** The vacuum under way that already held the writer KEEP_UP_WAIT_MS. */
  private waitedOut: Promise<void> | undefined;
  private vacuuming = false;
  /** Rows of orders_current that died since the last vacuum began. */
  private owed = 0;
  /** orders_current's rows, as the server last estimated them (pg_class.reltuples). */
  private rows: number | undefined;
  private said = false;
  private closed = false;

  constructor(private readonly url: string, private readonly notice: (message: string) => void = () => {}) {}

  /** `rows` of orders_current died (forgotten or replaced): a vacuum starts if it is due and none runs. */
  dead(rows: number): void {
    this.owed += rows;
    this.startIfDue();
  }

  /**
   * Resolves when the writer may write on: at once, unless a vacuum runs
   * and BEHIND due counts of dead rows wait for the next; then once it ends
   * (the next starts at once), or after KEEP_UP_WAIT_MS. A vacuum that held
   * the writer that long is not waited for again: one stuck behind a lock
   * must not hold every group after.
   */
  async keepUp(): Promise<void> {
    const running = this.running;
    if (running === undefined || running === this.waitedOut || this.owed < BEHIND * this.due()) return;
    // The timer goes once the vacuum ends: left pending, it would keep a finished ingest's process alive.
    const timer = new AbortController();
    const ended = await Promise.race([
      running.then(() => true), sleep(KEEP_UP_WAIT_MS, false, { signal: timer.signal }).catch(() => false),
    ]);
    timer.abort();
    if (!ended) this.waitedOut = running;
  }

  private due(): number {
    return FLOOR + SHARE * (this.rows ?? 0);
  }

  private startIfDue(): void {
    if (this.closed || this.running !== undefined || this.owed < this.due()) return;
    this.running = this.vacuumIfDue().then((vacuumed) => {
      this.running = undefined;
      // Dead rows that came while it ran may be due already: in a catch-up, no later count may come soon.
      if (vacuumed) this.startIfDue();
    });
  }

  /** Whether a vacuum ran; a failure is said once, and the next count tries again. */
  private async vacuumIfDue(): Promise<boolean> {
    try {
      this.session ??= await this.connect();
      this.rows ??= await this.estimate();
      if (this.closed || this.owed < this.due()) return false;
      this.owed = 0;
      this.vacuuming = true;
      try {
        await this.session.client.query(VACUUM_STATEMENT);
      } finally {
        this.vacuuming = false;
      }
      this.rows = await this.estimate();
      return true;
    } catch (e) {
      if (this.closed) return false;
      if (!this.said) this.notice(`the writer's vacuum of ${VACUUMED.join(', ')} failed (tried again as pruning goes on): ${(e as Error).message}`);
      this.said = true;
      await this.session?.client.end().catch(() => undefined);
      this.session = undefined;
      return false;
    }
  }

  private async estimate(): Promise<number> {
    const { rows } = await this.session!.client.query<{ n: number }>(
      "SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'orders_current'::regclass",
    );
    return rows[0]!.n;
  }

  private async connect(): Promise<CancellableSession> {
    const session = await connectCancellable(this.url, 'vacuum');
    await session.client.query(`SET vacuum_cost_delay = '${COST_DELAY}'`);
    return session;
  }

  /**
   * Cancels a vacuum under way through `writer` (the writer's session, still
   * open): the next one, or autovacuum, starts over where it left off. A
   * vacuum that does not end within CANCEL_WAIT_MS (the writer's session
   * lost, say) is left to finish on the server, unwaited.
   */
  async close(writer: pg.ClientBase): Promise<void> {
    this.closed = true;
    // Again until it ends: a cancel that reaches the session before its VACUUM does cancels nothing.
    for (const until = performance.now() + CANCEL_WAIT_MS; this.vacuuming && this.session !== undefined && performance.now() < until;) {
      await cancelStatement(writer, this.session);
      await Promise.race([this.running, sleep(100)]);
    }
    if (!this.vacuuming) await this.running?.catch(() => undefined);
    await this.session?.client.end().catch(() => undefined);
  }
}
