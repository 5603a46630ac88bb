/**
 * PostgreSQL's pruning (docs/compatibility.md, section 13), run by the
 * writer thread between groups (../prune-turns.ts), on the writer's session,
 * which holds the writer lock: a standby that takes over carries on from
 * what the retention row says. A batch is one transaction over a run of
 * whole blocks older than the window: orders that can no longer trade and
 * whose latest row is there are deleted (current state, bounded), the
 * latest rows of those that can still trade are copied to
 * orders_history_resting, and the oldest kept block moves past the run, out
 * of the readers' sight (orders_history_kept). No history row is deleted:
 * a partition wholly below the oldest kept block is dropped, in a
 * transaction of its own that waits at most DROP_LOCK_TIMEOUT for the
 * readers that hold it. The batch itself is one statement
 * (./prune-batch-sql.ts); the writer vacuums what batches delete
 * (./vacuum.ts).
 */
import type pg from 'pg';
import type { PruneBatch } from '../prune-turns.js';
import type { WriterPartitions } from './partitions.js';
import { CREATE_PRUNE_BATCH, PRUNE_BATCH_FUNCTION } from './prune-batch-sql.js';

/** How long dropping a partition waits for the queries that read it; then it is tried again later. */
const DROP_LOCK_TIMEOUT = '50ms';
const LOCK_NOT_AVAILABLE = '55P03';

export class PostgresPruner {
  /** The session's batch function, created on the first batch. */
  private created: Promise<unknown> | undefined;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly windowNs: bigint,
    private readonly partitions: WriterPartitions,
    /** Throws once the writer lock is lost: a standby may be pruning by then. */
    private readonly check: () => void,
    /** Told of the orders each batch forgets: their current-state rows are dead (./vacuum.ts). */
    private readonly forgot: (orders: number) => void = () => {},
  ) {}

  readonly step = async (maxRows: number): Promise<PruneBatch> => {
    this.check();
    this.created ??= this.client.query(CREATE_PRUNE_BATCH);
    await this.created;
    // One statement, its own transaction.
    const { rows } = await this.client.query<{ pruned: string; forgotten: string; more: boolean; below: string }>(
      `SELECT pruned::text AS pruned, forgotten::text AS forgotten, more, below::text AS below FROM ${PRUNE_BATCH_FUNCTION}($1, $2)`,
      [this.windowNs.toString(), maxRows],
    );
    const batch = rows[0]!;
    if (batch.forgotten !== '0') this.forgot(Number(batch.forgotten));
    const blocked = await this.dropBelow(BigInt(batch.below));
    return { rows: Number(batch.pruned), more: batch.more || blocked, ...(blocked && { blocked }) };
  };

  /** Drops the partitions wholly below `below`; true if readers held one past the lock timeout. */
  private async dropBelow(below: bigint): Promise<boolean> {
    for (const p of await this.partitions.list(this.client)) {
      if (p.to > below) break;
      try {
        await this.inTransaction(async () => {
          await this.client.query(`SET LOCAL lock_timeout = '${DROP_LOCK_TIMEOUT}'`);
          await this.client.query(`DROP TABLE ${p.name}`);
        });
      } catch (e) {
        if ((e as { code?: string }).code === LOCK_NOT_AVAILABLE) return true;
        throw e;
      }
      this.partitions.dropped(p.name);
    }
    return false;
  }

  private async inTransaction<T>(work: () => Promise<T>): Promise<T> {
    await this.client.query('BEGIN');
    try {
      const result = await work();
      await this.client.query('COMMIT');
      return result;
    } catch (e) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }
}
