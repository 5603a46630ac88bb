/**
 * The embedded store's pruning (docs/compatibility.md, section 13), run by
 * the writer thread between groups (../prune-turns.ts): each batch is one
 * transaction over a run of whole blocks older than the window, deleting
 * what the window no longer keeps. The pages it frees go on SQLite's free
 * list, and the blocks that follow reuse them: the file stops growing once
 * the window is full (it never shrinks on its own; README "Retention").
 */
import type Database from 'better-sqlite3';
import { cutoffTime } from '../../domain/retention.js';
import type { PruneBatch } from '../prune-turns.js';
import { LIVE_STATUSES } from '../../domain/order.js';
import { COUNTED_DIMENSIONS, isLatest } from '../prune-sql.js';
import { SQLITE } from './dialect.js';
import { DeletedOrderIds } from './order-ids.js';
import { fromU64, u64 } from '../rows.js';

interface State {
  pruned_below: unknown;
  recheck_height: unknown;
}

export class SqlitePruner {
  private readonly statements: ReturnType<typeof prepare>;
  private readonly deletedIds: DeletedOrderIds;
  private readonly transaction: (maxRows: number) => PruneBatch;
  /** The writer's WAL autocheckpoint, in pages (./database.ts). */
  private readonly checkpointPages: number;

  constructor(private readonly db: Database.Database, private readonly windowNs: bigint) {
    this.statements = prepare(db);
    this.deletedIds = new DeletedOrderIds(db);
    this.transaction = db.transaction((maxRows: number) => this.batch(maxRows)).immediate;
    this.checkpointPages = Number(db.pragma('wal_autocheckpoint', { simple: true }));
  }

  /**
   * One batch of about `maxRows` rows, in one transaction that takes the
   * write lock at once. Its commit never writes the WAL back into the file
   * (seconds for the hundreds of MB the writer lets it hold): the next
   * group's does, as it would have without pruning, so a batch stays short.
   */
  readonly step = (maxRows: number): PruneBatch => {
    this.db.pragma('wal_autocheckpoint = 0');
    try {
      return this.transaction(maxRows);
    } finally {
      this.db.pragma(`wal_autocheckpoint = ${this.checkpointPages}`);
    }
  };

  private batch(maxRows: number): PruneBatch {
    const started = performance.now();
    const s = this.statements;
    const last = s.lastBlock.get() as { height: unknown; time: bigint } | undefined;
    if (last === undefined) return { rows: 0, more: false };
    const lastHeight = fromU64(last.height);
    const cutoff = cutoffTime(last.time, this.windowNs);
    const state = s.state.get() as State;
    let below = fromU64(state.pruned_below);
    let recheck = fromU64(state.recheck_height);
    let rows = 0;

    // Rows stored since the last look supersede the resting rows of their orders.
    if (recheck < lastHeight) {
      if (s.anyResting.get(u64(below)) === undefined) {
        recheck = lastHeight;
      } else {
        const nth = s.nthRowAbove.get(u64(recheck), maxRows) as unknown;
        const end = nth === undefined ? lastHeight : fromU64(nth);
        rows += s.deleteSuperseded.run(u64(below), u64(recheck), u64(end)).changes;
        recheck = end;
      }
    }

    // The blocks from `below` on that are older than the window, as many as the budget takes.
    let more = recheck < lastHeight;
    let swept = false;
    const first = s.firstBlockFrom.get(u64(below)) as { height: unknown; time: bigint } | undefined;
    if (first !== undefined && first.time < cutoff) {
      const nth = s.nthRowFrom.get(u64(below), maxRows) as unknown;
      const firstHeight = fromU64(first.height);
      const limit = nth === undefined ? undefined : fromU64(nth) > firstHeight ? fromU64(nth) : firstHeight + 1n;
      // The batch ends at the first block not older than the window, or at the budget's end, whichever comes first.
      const upto = limit ?? lastHeight + 1n;
      const young = s.firstYoungBlock.get(u64(firstHeight), u64(upto), cutoff) as unknown;
      const next = young === undefined ? (s.firstBlockFrom.get(u64(upto)) as { height: unknown; time: bigint } | undefined) : undefined;
      const end = young !== undefined ? fromU64(young) : next === undefined ? upto : fromU64(next.height);
      const olderLeft = young === undefined && next !== undefined && next.time < cutoff;
      rows += this.sweep(below, end);
      below = end;
      more ||= olderLeft;
      swept = true;
    }
    const ns = BigInt(Math.round((performance.now() - started) * 1e6));
    s.update.run(u64(below), u64(recheck), swept ? this.windowNs : null, rows, ns, ns);
    return { rows, more };
  }

  /**
   * Prunes history from `from` up to `to` (exclusive), whole blocks older
   * than the window; returns the rows deleted. Each order's latest row is
   * found in one pass: it rests (kept, its height and seq noted in
   * lq_resting_batch) or its order is forgotten; then the range goes in one
   * delete, which passes over the noted rows.
   */
  private sweep(from: bigint, to: bigint): number {
    const s = this.statements;
    const range = [u64(from), u64(to)];
    const latest = s.latestRows.all(...range) as [height: unknown, seq: unknown, no: bigint, id: Uint8Array, ...counted: unknown[]][];
    const counts = COUNTED_DIMENSIONS.map(() => new Map<bigint, number>());
    const gone: { no: bigint; id: Uint8Array }[] = [];
    let resting = 0;
    for (const [height, seq, no, id, ...counted] of latest) {
      if (CAN_TRADE_STATUSES.has(Number(counted[STATUS_COLUMN]))) {
        s.rest.run(height, seq);
        resting += 1;
        continue;
      }
      gone.push({ no, id });
      counted.forEach((value, d) => counts[d]!.set(value as bigint, (counts[d]!.get(value as bigint) ?? 0) - 1));
    }
    // In table order: neighbouring rows share pages.
    gone.sort((a, b) => (a.no < b.no ? -1 : a.no > b.no ? 1 : 0));
    for (const { no, id } of gone) {
      this.deletedIds.add(id);
      s.deleteCurrent.run(no);
    }
    this.deletedIds.flush();
    counts.forEach((deltas, d) => {
      for (const [value, delta] of deltas) s.addCount.run(COUNTED_DIMENSIONS[d]![0], value, delta);
    });
    const history = (resting === 0 ? s.deleteRange : s.deleteRangeButResting).run(...range).changes;
    if (resting > 0) s.clearResting.run();
    s.deleteBlocks.run(u64(to));
    return gone.length + history;
  }
}

/** The statuses of an order that can still trade, as numbers (CAN_TRADE in SQL). */
const CAN_TRADE_STATUSES = new Set<number>(LIVE_STATUSES);
/** Where status is among a latest row's counted columns. */
const STATUS_COLUMN = COUNTED_DIMENSIONS.findIndex(([name]) => name === 'status');

function prepare(db: Database.Database) {
  // The batch's resting rows, between its two statements: the connection's own, never in the file.
  db.exec('CREATE TEMP TABLE IF NOT EXISTS lq_resting_batch (height ANY NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (height, seq)) WITHOUT ROWID');
  return {
    lastBlock: db.prepare('SELECT height, time FROM last_block WHERE only_row = 1'),
    state: db.prepare('SELECT pruned_below, recheck_height FROM retention WHERE only_row = 1'),
    anyResting: db.prepare('SELECT 1 FROM orders_history WHERE height < ? LIMIT 1'),
    nthRowAbove: db.prepare('SELECT height FROM orders_history WHERE height > ? ORDER BY height, seq LIMIT 1 OFFSET ?').pluck(),
    nthRowFrom: db.prepare('SELECT height FROM orders_history WHERE height >= ? ORDER BY height, seq LIMIT 1 OFFSET ?').pluck(),
    // Below `pruned_below` only resting rows are left: a newer row of their order means they rest no more.
    deleteSuperseded: db.prepare(
      'DELETE FROM orders_history WHERE height < ? AND order_no IN (SELECT order_no FROM orders_history WHERE height > ? AND height <= ?)',
    ),
    firstBlockFrom: db.prepare('SELECT height, time FROM blocks WHERE height >= ? ORDER BY height LIMIT 1'),
    firstYoungBlock: db.prepare('SELECT height FROM blocks WHERE height > ? AND height < ? AND time >= ? ORDER BY height LIMIT 1').pluck(),
    // Each order's latest row in the range, with its current state's number, id and counted columns.
    latestRows: db.prepare(
      `SELECT h.height, h.seq, o.no, o.id_bytes, ${COUNTED_DIMENSIONS.map(([, c]) => `o.${c}`).join(', ')} ` +
        `FROM orders_history h JOIN orders_current o ON o.no = h.order_no WHERE h.height >= ? AND h.height < ? AND ${isLatest(SQLITE.historyOrder.column)}`,
    ).raw(true),
    rest: db.prepare('INSERT INTO lq_resting_batch (height, seq) VALUES (?, ?)'),
    clearResting: db.prepare('DELETE FROM lq_resting_batch'),
    deleteCurrent: db.prepare('DELETE FROM orders_current WHERE no = ?'),
    addCount: db.prepare(
      'INSERT INTO order_counts (dimension, value, n) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n',
    ),
    deleteRange: db.prepare('DELETE FROM orders_history WHERE height >= ? AND height < ?'),
    deleteRangeButResting: db.prepare(
      'DELETE FROM orders_history AS h WHERE h.height >= ? AND h.height < ? ' +
        'AND NOT EXISTS (SELECT 1 FROM lq_resting_batch r WHERE r.height = h.height AND r.seq = h.seq)',
    ),
    deleteBlocks: db.prepare('DELETE FROM blocks WHERE height < ?'),
    update: db.prepare(
      'UPDATE retention SET pruned_below = ?, recheck_height = ?, window_ns = coalesce(?, window_ns), ' +
        'rows_pruned = rows_pruned + ?, prune_ns = prune_ns + ?, longest_batch_ns = max(longest_batch_ns, ?) WHERE only_row = 1',
    ),
  };
}
