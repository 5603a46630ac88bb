/**
 * The writer's vacuum: the writer vacuums the tables pruning deletes from
 * itself, on a session of its own, once pruning has forgotten
 * FLOOR + SHARE of orders_current's rows since the last time. Autovacuum
 * is asked to vacuum them sooner than by default (migration 6,
 * ./schema.ts), but looks only every
 * autovacuum_naptime (a minute by default): while a store catches up hours
 * of network time a minute, the window turned over several times between
 * its visits, and orders_current grew by its dead rows window after window
 * (BENCHMARKS.md, "The writer's vacuum"). The count is the prune batches'
 * own, not the server's statistics, which reach other sessions up to ten
 * seconds after an idle writer's last transaction.
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
 * Forgotten orders that make a vacuum due: FLOOR + SHARE of orders_current's
 * rows. Each also left the dead rows of its changes, about three a forgotten
 * order in the simulated network, so a tenth keeps the table flat; a fiftieth
 * (migration 6's threshold for autovacuum) vacuumed four times as often and
 * lengthened the prune batches that ran beside (BENCHMARKS.md, "The writer's vacuum").
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

export class WriterVacuum {
  private session: CancellableSession | undefined;
  private running: Promise<void> | undefined;
  private vacuuming = false;
  /** Orders forgotten since the last vacuum began. */
  private owed = 0;
  /** orders_current's rows, as the server last estimated them (pg_class.reltuples). */
  private rows: number | undefined;
  private said = false;
  private closed = false;

  constructor(private readonly url: string, private readonly notice: (message: string) => void = () => {}) {}

  /** A prune batch forgot `orders`: a vacuum starts if it is due and none runs. */
  forgot(orders: number): void {
    this.owed += orders;
    if (this.closed || this.running !== undefined || this.owed < FLOOR + SHARE * (this.rows ?? 0)) return;
    this.running = this.vacuumIfDue().finally(() => {
      this.running = undefined;
    });
  }

  private async vacuumIfDue(): Promise<void> {
    try {
      this.session ??= await this.connect();
      this.rows ??= await this.estimate();
      if (this.closed || this.owed < FLOOR + SHARE * this.rows) return;
      this.owed = 0;
      this.vacuuming = true;
      try {
        await this.session.client.query(VACUUM_STATEMENT);
      } finally {
        this.vacuuming = false;
      }
      this.rows = await this.estimate();
    } catch (e) {
      if (this.closed) return;
      if (!this.said) this.notice(`the writer's vacuum of ${VACUUMED.join(', ')} failed (tried again as pruning goes on): ${(e as Error).message}`);
      this.said = true;
      await this.session?.client.end().catch(() => undefined);
      this.session = undefined;
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
