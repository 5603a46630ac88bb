/**
 * Schema version 9 of the embedded store (./migrations.ts): each order gets
 * a number, and history rows name their order by it. Frozen once released,
 * like every migration.
 *
 * - orders_current: `no`, its INTEGER PRIMARY KEY (so the table's own key,
 *   which VACUUM keeps; a plain rowid it may renumber). A new order takes
 *   the next number, so numbers grow with the time orders first appear.
 *   Stored orders keep the rowid they had, which grew the same way.
 * - orders_history: `order_no`, its order's number, and the index by order
 *   on (order_no, version, height) where it was (id_bytes, version, height).
 *   Ids are random: pruning a run of old blocks deleted entries all over the
 *   index and rewrote most of its pages each batch; old orders' numbers sit
 *   together at its low end (BENCHMARKS.md, "Order numbers").
 *
 * Every history row has its order's current state (pruning forgets an
 * order's rows with it); a row without one stops the migration, naming it.
 */
import type Database from 'better-sqlite3';
import { MigrationError } from '../../errors.js';

export function orderNumbers(db: Database.Database): void {
  // The table and its indexes as the store has them, made again with the number first.
  const schema = db.prepare("SELECT sql FROM sqlite_schema WHERE tbl_name = 'orders_current' AND type = ? AND sql IS NOT NULL").pluck();
  const [table] = schema.all('table') as string[];
  const indexes = schema.all('index') as string[];
  const opening = /^CREATE TABLE "?orders_current"? \(/;
  if (table === undefined || !opening.test(table)) throw new MigrationError('cannot migrate: orders_current is not as version 8 made it');
  const columns = (db.prepare("SELECT name FROM pragma_table_info('orders_current')").pluck().all() as string[]).join(', ');
  db.exec(`
    ${table.replace(opening, `CREATE TABLE orders_current_v9 (
      -- The order's number (./order-numbers.ts): history rows name their order by it.
      no INTEGER PRIMARY KEY,`)};
    INSERT INTO orders_current_v9 (no, ${columns}) SELECT rowid, ${columns} FROM orders_current ORDER BY rowid;
    DROP TABLE orders_current;
    ALTER TABLE orders_current_v9 RENAME TO orders_current;
    ${indexes.map((sql) => `${sql};`).join('\n    ')}

    CREATE TABLE orders_history_v9 (
      height ANY NOT NULL,
      -- The row's position in its block's batch (the original's order).
      seq INTEGER NOT NULL,
      -- Its order's number (orders_current.no).
      order_no INTEGER NOT NULL,
      id_bytes BLOB NOT NULL,
      version ANY NOT NULL,
      -- NULL: the message is kept whole. Else the message's leading ids are
      -- the order's, this market's and this party's, and left out.
      market_no INTEGER,
      party_no INTEGER,
      message BLOB NOT NULL,
      PRIMARY KEY (height, seq)
    ) WITHOUT ROWID, STRICT;
    INSERT INTO orders_history_v9 (height, seq, order_no, id_bytes, version, market_no, party_no, message)
      SELECT h.height, h.seq, o.no, h.id_bytes, h.version, h.market_no, h.party_no, h.message
      FROM orders_history h JOIN orders_current o ON o.id_bytes = h.id_bytes ORDER BY h.height, h.seq;
  `);
  // Rows the join left out have no current state; looked for only then (a probe per row).
  const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as bigint;
  if (count('orders_history_v9') !== count('orders_history')) {
    const orphan = db.prepare(
      'SELECT h.id_bytes FROM orders_history h WHERE NOT EXISTS (SELECT 1 FROM orders_current o WHERE o.id_bytes = h.id_bytes) LIMIT 1',
    ).pluck().get() as Buffer;
    throw new MigrationError(`cannot migrate: order ${orphan.toString('hex')} has history but no current state`);
  }
  db.exec(`
    DROP VIEW orders_history_kept;
    DROP TABLE orders_history;
    ALTER TABLE orders_history_v9 RENAME TO orders_history;
    CREATE VIEW orders_history_kept AS SELECT * FROM orders_history;
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (order_no, version, height);
  `);
}
