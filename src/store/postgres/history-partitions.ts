/**
 * Migration 5 of the PostgreSQL schema (./schema.ts), as the embedded
 * store's version 8 (../sqlite/retention-table.ts) and more: history moves
 * into partitions by block height (./partitions.ts), so that retention
 * drops old history a partition at a time. Frozen once released, like
 * every migration.
 *
 * - orders_history: the same columns, key and index, partitioned by RANGE
 *   (height); stored rows move into partitions of ARCHIVE_SPAN blocks from
 *   height 0, slice by slice, with a progress line.
 * - orders_history_resting: the resting rows (docs/compatibility.md,
 *   section 13): an order's latest row, kept while the order can trade,
 *   once the partition that held it goes.
 * - retention: as the embedded store's, one row.
 * - orders_history_kept: history as readers see it: the rows of the oldest
 *   kept block on (a partition still holds older ones until it is dropped
 *   whole), and the resting rows.
 */
import type pg from 'pg';
import { ProgressLines } from '../notice.js';
import { ARCHIVE_SPAN, addPartition } from './partitions.js';

/** Heights moved per statement: a progress line each at most, and no statement holding the session for long. */
const SLICE_HEIGHTS = 20_000n;

const HISTORY_COLUMNS = 'height, seq, id_bytes, version, market_no, party_no, message';

export async function historyPartitions(client: pg.ClientBase, notice: (message: string) => void): Promise<void> {
  await client.query(`
    CREATE TABLE retention (
      only_row SMALLINT PRIMARY KEY CHECK (only_row = 1),
      setting TEXT NOT NULL DEFAULT 'archive',
      window_ns BIGINT,
      pruned_below NUMERIC(20) NOT NULL DEFAULT 0,
      recheck_height NUMERIC(20) NOT NULL DEFAULT 0,
      rows_pruned BIGINT NOT NULL DEFAULT 0,
      prune_ns BIGINT NOT NULL DEFAULT 0,
      longest_batch_ns BIGINT NOT NULL DEFAULT 0
    );
    INSERT INTO retention (only_row) VALUES (1);

    ALTER TABLE orders_history RENAME TO orders_history_v4;
    ALTER INDEX orders_history_pkey RENAME TO orders_history_v4_pkey;
    ALTER INDEX orders_history_by_order RENAME TO orders_history_v4_by_order;
    -- The columns of migration 4's table, as they were.
    CREATE TABLE orders_history (LIKE orders_history_v4, PRIMARY KEY (height, seq)) PARTITION BY RANGE (height);
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (id_bytes, version, height);

    CREATE TABLE orders_history_resting (LIKE orders_history INCLUDING DEFAULTS, PRIMARY KEY (height, seq));
    CREATE UNIQUE INDEX orders_history_resting_by_order ON orders_history_resting (id_bytes, version, height);

    CREATE VIEW orders_history_kept AS
      SELECT ${HISTORY_COLUMNS} FROM orders_history
      WHERE height >= (SELECT pruned_below FROM retention WHERE only_row = 1)
      UNION ALL
      SELECT ${HISTORY_COLUMNS} FROM orders_history_resting;
  `);
  const { rows } = await client.query<{ top: string | null; n: string }>(
    'SELECT max(height)::text AS top, count(*)::text AS n FROM orders_history_v4',
  );
  const top = rows[0]!.top === null ? undefined : BigInt(rows[0]!.top);
  const total = Number(rows[0]!.n);
  if (top !== undefined) {
    for (let from = 0n; from <= top; from += ARCHIVE_SPAN) await addPartition(client, from, from + ARCHIVE_SPAN);
    let moved = 0;
    const lines = new ProgressLines(notice);
    for (let from = 0n; from <= top; from += SLICE_HEIGHTS) {
      const result = await client.query(
        `INSERT INTO orders_history (${HISTORY_COLUMNS}) SELECT ${HISTORY_COLUMNS} FROM orders_history_v4 WHERE height >= $1 AND height < $2`,
        [from.toString(), (from + SLICE_HEIGHTS).toString()],
      );
      moved += result.rowCount ?? 0;
      lines.sayEvery(
        () => `migrating PostgreSQL history into partitions by block height: ${moved} of ${total} rows (${Math.floor((100 * moved) / total)}%)`,
        from + SLICE_HEIGHTS > top,
      );
    }
  }
  await client.query('DROP TABLE orders_history_v4');
}
