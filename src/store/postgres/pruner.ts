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
 * readers that hold it.
 */
import type pg from 'pg';
import { cutoffTime } from '../../domain/retention.js';
import type { PruneBatch } from '../prune-turns.js';
import { CAN_TRADE, COUNTED_DIMENSIONS, IS_LATEST, RESTS } from '../prune-sql.js';
import type { WriterPartitions } from './partitions.js';

/** How long dropping a partition waits for the queries that read it; then it is tried again later. */
const DROP_LOCK_TIMEOUT = '50ms';
const LOCK_NOT_AVAILABLE = '55P03';

const FORGET_SQL = `
  WITH forgotten AS (
    DELETE FROM orders_current o USING orders_history h
    WHERE h.height >= $1 AND h.height < $2 AND o.id_bytes = h.id_bytes AND o.status NOT IN ${CAN_TRADE} AND ${IS_LATEST}
    RETURNING ${COUNTED_DIMENSIONS.map(([, c]) => `o.${c}`).join(', ')}
  ), counted AS (
    INSERT INTO order_counts (dimension, value, n)
    SELECT d.dimension, d.value, -count(*) FROM forgotten f CROSS JOIN LATERAL (VALUES
      ${COUNTED_DIMENSIONS.map(([name, c]) => `('${name}', f.${c}::integer)`).join(', ')}
    ) AS d (dimension, value)
    GROUP BY d.dimension, d.value
    ON CONFLICT (dimension, value) DO UPDATE SET n = order_counts.n + excluded.n
  )
  SELECT count(*)::integer AS n FROM forgotten`;

const REST_SQL = `
  INSERT INTO orders_history_resting (height, seq, id_bytes, version, market_no, party_no, message)
  SELECT h.height, h.seq, h.id_bytes, h.version, h.market_no, h.party_no, h.message
  FROM orders_history h WHERE h.height >= $1 AND h.height < $2 AND ${RESTS}`;

interface Block {
  height: string;
  time: bigint;
}

export class PostgresPruner {
  constructor(
    private readonly client: pg.ClientBase,
    private readonly windowNs: bigint,
    private readonly partitions: WriterPartitions,
    /** Throws once the writer lock is lost: a standby may be pruning by then. */
    private readonly check: () => void,
  ) {}

  readonly step = async (maxRows: number): Promise<PruneBatch> => {
    this.check();
    const started = performance.now();
    const batch = await this.inTransaction(() => this.batch(maxRows, started));
    const blocked = await this.dropBelow(batch.prunedBelow);
    return { rows: batch.rows, more: batch.more || blocked, ...(blocked && { blocked }) };
  };

  private async batch(maxRows: number, started: number): Promise<{ rows: number; more: boolean; prunedBelow: bigint }> {
    const c = this.client;
    const last = (await c.query<Block>('SELECT height::text AS height, time FROM last_block WHERE only_row = 1')).rows[0];
    const state = (await c.query<{ below: string; recheck: string }>(
      'SELECT pruned_below::text AS below, recheck_height::text AS recheck FROM retention WHERE only_row = 1 FOR UPDATE',
    )).rows[0]!;
    let below = BigInt(state.below);
    if (last === undefined) return { rows: 0, more: false, prunedBelow: below };
    const lastHeight = BigInt(last.height);
    const cutoff = cutoffTime(BigInt(last.time), this.windowNs);
    let recheck = BigInt(state.recheck);
    let rows = 0;

    // Rows stored since the last look supersede the resting rows of their orders.
    if (recheck < lastHeight) {
      const resting = await c.query('SELECT 1 FROM orders_history_resting LIMIT 1');
      if (resting.rowCount === 0) {
        recheck = lastHeight;
      } else {
        const end = (await this.nthHeight('>', recheck, maxRows)) ?? lastHeight;
        const gone = await c.query(
          'DELETE FROM orders_history_resting WHERE id_bytes IN (SELECT id_bytes FROM orders_history WHERE height > $1 AND height <= $2)',
          [recheck.toString(), end.toString()],
        );
        rows += gone.rowCount ?? 0;
        recheck = end;
      }
    }

    let more = recheck < lastHeight;
    let swept = false;
    const first = (await c.query<Block>(
      'SELECT b.height::text AS height, b.time FROM blocks b WHERE b.height >= $1 ORDER BY b.height LIMIT 1', [below.toString()],
    )).rows[0];
    if (first !== undefined && BigInt(first.time) < cutoff) {
      const firstHeight = BigInt(first.height);
      const nth = await this.nthHeight('>=', below, maxRows);
      const limit = nth === undefined ? undefined : nth > firstHeight ? nth : firstHeight + 1n;
      // The batch ends at the first block not older than the window, or at the budget's end, whichever comes first.
      const upto = limit ?? lastHeight + 1n;
      const young = (await c.query<{ height: string }>(
        'SELECT b.height::text AS height FROM blocks b WHERE b.height > $1 AND b.height < $2 AND b.time >= $3 ORDER BY b.height LIMIT 1',
        [first.height, upto.toString(), cutoff.toString()],
      )).rows[0];
      const next = young === undefined ? (await c.query<Block>(
        'SELECT b.height::text AS height, b.time FROM blocks b WHERE b.height >= $1 ORDER BY b.height LIMIT 1', [upto.toString()],
      )).rows[0] : undefined;
      const end = young !== undefined ? BigInt(young.height) : next === undefined ? upto : BigInt(next.height);
      const olderLeft = young === undefined && next !== undefined && BigInt(next.time) < cutoff;
      rows += await this.sweep(below, end);
      below = end;
      more ||= olderLeft;
      swept = true;
    }
    const ns = BigInt(Math.round((performance.now() - started) * 1e6)).toString();
    await c.query(
      'UPDATE retention SET pruned_below = $1, recheck_height = $2, window_ns = coalesce($3, window_ns), ' +
        'rows_pruned = rows_pruned + $4, prune_ns = prune_ns + $5, longest_batch_ns = greatest(longest_batch_ns, $5) WHERE only_row = 1',
      [below.toString(), recheck.toString(), swept ? this.windowNs.toString() : null, rows, ns],
    );
    return { rows, more, prunedBelow: below };
  }

  /** The height of the row `n` rows after the first one `op` `height`, in (height, seq) order. */
  private async nthHeight(op: '>' | '>=', height: bigint, n: number): Promise<bigint | undefined> {
    const { rows } = await this.client.query<{ height: string }>(
      // Ordered by the column, not by the text it is selected as.
      `SELECT h.height::text AS height FROM orders_history h WHERE h.height ${op} $1 ORDER BY h.height, h.seq OFFSET $2 LIMIT 1`,
      [height.toString(), n],
    );
    return rows[0] === undefined ? undefined : BigInt(rows[0].height);
  }

  /** Prunes heights from `from` up to `to` (exclusive), whole blocks older than the window; returns the rows pruned. */
  private async sweep(from: bigint, to: bigint): Promise<number> {
    const c = this.client;
    const range = [from.toString(), to.toString()];
    const forgotten = (await c.query<{ n: number }>(FORGET_SQL, range)).rows[0]!.n;
    const resting = (await c.query(REST_SQL, range)).rowCount ?? 0;
    const { rows } = await c.query<{ n: number }>('SELECT count(*)::integer AS n FROM orders_history WHERE height >= $1 AND height < $2', range);
    await c.query('DELETE FROM blocks WHERE height < $1', [to.toString()]);
    return forgotten + rows[0]!.n - resting;
  }

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
