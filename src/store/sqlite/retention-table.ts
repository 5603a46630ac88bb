/**
 * Schema version 8 of the embedded store (./migrations.ts): what pruning
 * keeps of its own (../retention-state.ts reads and writes it), and the view
 * every reader reads history through. Frozen once released, like every
 * migration.
 *
 * - retention: one row. `setting`, the retention its writer was last
 *   started with (`archive`, `standard`, `5m`); `window_ns`, the window the
 *   store was last pruned with (NULL: never pruned); `pruned_below`, the height below which only
 *   resting rows are left (docs/compatibility.md, section 13);
 *   `recheck_height`, the height up to which newer rows have been checked
 *   against resting rows; counters of what pruning did.
 * - orders_history_kept: history as readers see it. The embedded store
 *   deletes what it prunes, so it is the table itself (SQLite flattens the
 *   view: every plan is the table's); PostgreSQL's holds the rows its
 *   partitions still keep past the window out of sight, and adds the resting
 *   rows (../postgres/partitions.ts).
 */
export const RETENTION_TABLE_SQL = `
  CREATE TABLE retention (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    setting TEXT NOT NULL,
    window_ns INTEGER,
    pruned_below ANY NOT NULL,
    recheck_height ANY NOT NULL,
    rows_pruned INTEGER NOT NULL,
    prune_ns INTEGER NOT NULL,
    longest_batch_ns INTEGER NOT NULL
  ) STRICT;
  INSERT INTO retention (only_row, setting, window_ns, pruned_below, recheck_height, rows_pruned, prune_ns, longest_batch_ns)
    VALUES (1, 'archive', NULL, 0, 0, 0, 0, 0);
  CREATE VIEW orders_history_kept AS SELECT * FROM orders_history;
`;
