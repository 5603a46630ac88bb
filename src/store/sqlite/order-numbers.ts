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
import { ProgressLines } from '../notice.js';

/** Rows copied per statement: a progress line between statements, at most every 2 s (../notice.ts). */
const SLICE_ROWS = 200_000;

/** This migration's progress lines, each with the seconds since it began. */
function progress(notice: (message: string) => void) {
  const began = performance.now();
  const lines = new ProgressLines(notice);
  const line = (message: string) => `migrating to schema 9 (order numbers): ${message} (${((performance.now() - began) / 1000).toFixed(0)} s)`;
  return {
    say: (message: string) => lines.say(line(message)),
    every: (message: () => string) => lines.sayEvery(() => line(message())),
  };
}

const share = (done: bigint, total: bigint) => `${done} of ${total} (${total === 0n ? 100n : (100n * done) / total}%)`;

export function orderNumbers(db: Database.Database, notice: (message: string) => void, sliceRows = SLICE_ROWS): void {
  // The table and its indexes as the store has them, made again with the number first.
  const schema = db.prepare("SELECT sql FROM sqlite_schema WHERE tbl_name = 'orders_current' AND type = ? AND sql IS NOT NULL").pluck();
  const [table] = schema.all('table') as string[];
  const indexes = schema.all('index') as string[];
  const opening = /^CREATE TABLE "?orders_current"? \(/;
  if (table === undefined || !opening.test(table)) throw new MigrationError('cannot migrate: orders_current is not as version 8 made it');
  const columns = (db.prepare("SELECT name FROM pragma_table_info('orders_current')").pluck().all() as string[]).join(', ');
  const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as bigint;
  const orders = count('orders_current');
  const versions = count('orders_history');
  const report = progress(notice);
  report.say(`${orders} orders and ${versions} order versions to rewrite, in one transaction`);

  db.exec(table.replace(opening, `CREATE TABLE orders_current_v9 (
      -- The order's number (./order-numbers.ts): history rows name their order by it.
      no INTEGER PRIMARY KEY,`));
  // In slices of rowids, each starting after the last one copied.
  const copyOrders = db.prepare(
    `INSERT INTO orders_current_v9 (no, ${columns}) SELECT rowid, ${columns} FROM orders_current WHERE rowid > ? ORDER BY rowid LIMIT ?`,
  );
  for (let after: bigint = -1n, copied = 0n; ; ) {
    const { changes, lastInsertRowid } = copyOrders.run(after, sliceRows);
    if (changes === 0) break;
    copied += BigInt(changes);
    // Copied in rowid order: the slice's last row has its highest.
    after = BigInt(lastInsertRowid);
    report.every(() => `orders ${share(copied, orders)}`);
  }
  db.exec(`
    DROP TABLE orders_current;
    ALTER TABLE orders_current_v9 RENAME TO orders_current;
  `);
  indexes.forEach((sql, i) => {
    report.say(`indexing the orders: ${i + 1} of ${indexes.length}`);
    db.exec(sql);
  });
  db.exec(`
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
  `);
  // In slices of the history's key, each starting after the last row copied. Rows the join leaves
  // out (no current state) are read again by the next slice, and fail the count below.
  const read = `SELECT h.height, h.seq, o.no, h.id_bytes, h.version, h.market_no, h.party_no, h.message
      FROM orders_history h JOIN orders_current o ON o.id_bytes = h.id_bytes`;
  const insert = 'INSERT INTO orders_history_v9 (height, seq, order_no, id_bytes, version, market_no, party_no, message)';
  const first = db.prepare(`${insert} ${read} ORDER BY h.height, h.seq LIMIT ?`);
  const next = db.prepare(`${insert} ${read} WHERE (h.height, h.seq) > (?, ?) ORDER BY h.height, h.seq LIMIT ?`);
  const lastCopied = db.prepare('SELECT height, seq FROM orders_history_v9 ORDER BY height DESC, seq DESC LIMIT 1').raw(true);
  for (let after: unknown[] | undefined, copied = 0n; ; ) {
    const n = BigInt((after === undefined ? first.run(sliceRows) : next.run(...after, sliceRows)).changes);
    if (n === 0n) break;
    copied += n;
    after = lastCopied.get() as unknown[];
    report.every(() => `order versions ${share(copied, versions)}`);
  }
  // Rows the join left out have no current state; looked for only then (a probe per row).
  if (count('orders_history_v9') !== versions) {
    const orphan = db.prepare(
      'SELECT h.id_bytes FROM orders_history h WHERE NOT EXISTS (SELECT 1 FROM orders_current o WHERE o.id_bytes = h.id_bytes) LIMIT 1',
    ).pluck().get() as Buffer;
    throw new MigrationError(`cannot migrate: order ${orphan.toString('hex')} has history but no current state`);
  }
  report.say('order versions copied; indexing them by order');
  db.exec(`
    DROP VIEW orders_history_kept;
    DROP TABLE orders_history;
    ALTER TABLE orders_history_v9 RENAME TO orders_history;
    CREATE VIEW orders_history_kept AS SELECT * FROM orders_history;
    CREATE UNIQUE INDEX orders_history_by_order ON orders_history (order_no, version, height);
  `);
  report.say('done');
}
