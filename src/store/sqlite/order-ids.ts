/**
 * The embedded store's index of orders by id, in levels (the glossary's
 * "id level"). Ids are hashes: one B-tree of every id takes each new order
 * on a page of its own once the tree is far larger than a group's orders,
 * and the archive's ingest fell to 0.59 of its first rate by 30M versions,
 * most of each commit's pages being that index's (BENCHMARKS.md, "Orders
 * by id in levels"). Here a new id goes into level 0, a table small enough
 * that a group dirties all of it once; a level holding more than its
 * capacity drains into the next, a slice of ids in id order per group, so
 * that each page of the next level is rewritten once per drain rather than
 * once per order. SQLite has no such index of its own; the levels are plain
 * tables. The writer adds each new order's id (OrderIdLevels.add), and
 * pruning takes the ids of the orders it deletes out (DeletedOrderIds).
 * Not triggers: a statement that fires one keeps a journal of every page it
 * changes, in case it must be undone, which cost the writer a quarter of
 * its time.
 *
 * Every id is in exactly one level: the writer looks an id up in all of
 * them before it stores a new order, a move deletes what it inserts in one
 * transaction, and pruning deletes an order's id with the order.
 */
import type Database from 'better-sqlite3';

/** Levels 0 to LEVELS - 1; the last has no capacity. */
export const LEVELS = 6;
/** Level i holds at most FIRST_CAPACITY * GROWTH^i ids before it drains (64k, 512k, 4M, 32M, 256M). */
const FIRST_CAPACITY = 1 << 16;
const GROWTH = 8;

export const levelTable = (level: number) => `order_ids_${level}`;

/** Tables that only index orders_current: a copy rebuilds them rather than carrying them (./copy-tables.ts). */
export const ORDER_ID_TABLES: ReadonlySet<string> = new Set([
  ...Array.from({ length: LEVELS }, (_, level) => levelTable(level)),
  'order_id_levels',
]);

/** The table the id levels index (each id_bytes, with its row's no): a copy keys it by id and carries the levels with it. */
export const INDEXED_BY_ID_LEVELS = 'orders_current';

/** The number of the stored order whose id bytes are the statement's parameter, or NULL. */
export const ORDER_NO_OF_ID = '(SELECT no FROM order_ids WHERE id_bytes = ?)';

const levels = Array.from({ length: LEVELS }, (_, level) => level);

/**
 * The levels, their view and their state, for a store whose orders_current
 * has no id in them yet. Migration 10 runs it
 * as it is now; a change to the levels is a new migration.
 */
export const ORDER_ID_LEVELS_SQL = `
  ${levels.map((l) => `CREATE TABLE ${levelTable(l)} (id_bytes BLOB PRIMARY KEY, no INTEGER NOT NULL) WITHOUT ROWID, STRICT;`).join('\n  ')}
  -- Level 0 first: a scalar subquery stops at the first row, and recent orders change most.
  CREATE VIEW order_ids AS
    ${levels.map((l) => `SELECT id_bytes, no FROM ${levelTable(l)}`).join('\n    UNION ALL ')};
  -- drained_to: while a level drains, the last id moved out of it (x'' at the start); NULL otherwise.
  -- rows counts what came in and what moved out; deletes are counted again when a drain ends.
  CREATE TABLE order_id_levels (
    level INTEGER PRIMARY KEY,
    capacity INTEGER,
    rows INTEGER NOT NULL,
    drained_to BLOB
  ) STRICT;
  INSERT INTO order_id_levels (level, capacity, rows) VALUES
    ${levels.map((l) => `(${l}, ${l === LEVELS - 1 ? 'NULL' : FIRST_CAPACITY * GROWTH ** l}, 0)`).join(', ')};
`;

/** The ids of the orders a prune batch deletes, taken out of their levels together, level by level. */
export class DeletedOrderIds {
  private readonly note: Database.Statement;
  private readonly deletes: Database.Statement[];
  private readonly clear: Database.Statement;

  constructor(db: Database.Database) {
    // The connection's own, never in the file.
    db.exec('CREATE TEMP TABLE IF NOT EXISTS lq_deleted_ids (id_bytes BLOB PRIMARY KEY) WITHOUT ROWID');
    this.note = db.prepare('INSERT OR IGNORE INTO temp.lq_deleted_ids (id_bytes) VALUES (?)');
    this.deletes = levels.map((l) => db.prepare(`DELETE FROM ${levelTable(l)} WHERE id_bytes IN (SELECT id_bytes FROM temp.lq_deleted_ids)`));
    this.clear = db.prepare('DELETE FROM temp.lq_deleted_ids');
  }

  /** The id of an order the batch deletes. */
  add(id: Uint8Array): void {
    this.note.run(id);
  }

  /** After them: their ids out of every level. */
  flush(): void {
    for (const d of this.deletes) d.run();
    this.clear.run();
  }
}

/**
 * Puts every order's id into the last level, in one sorted pass, the others
 * emptied: after a bulk load.
 */
export function fillOrderIds(db: Database.Database): void {
  for (const l of levels) db.exec(`DELETE FROM ${levelTable(l)}`);
  const last = levelTable(LEVELS - 1);
  const { changes } = db.prepare(`INSERT INTO ${last} (id_bytes, no) SELECT id_bytes, no FROM orders_current ORDER BY id_bytes`).run();
  db.prepare('UPDATE order_id_levels SET rows = CASE level WHEN ? THEN ? ELSE 0 END, drained_to = NULL').run(LEVELS - 1, changes);
}

/** Ids moved per group at least while a level drains, and per new order of the group. */
const MOVE_AT_LEAST = 4096;
const MOVE_PER_NEW_ID = 4;

interface LevelState {
  level: bigint;
  capacity: bigint | null;
  rows: bigint;
  drained_to: Buffer | null;
}

interface LevelStatements {
  /** The id `n` places past `after`: where a slice of n ids ends. */
  sliceEnd: Database.Statement;
  moveSlice: Database.Statement;
  deleteSlice: Database.Statement;
  moveRest: Database.Statement;
  deleteRest: Database.Statement;
  count: Database.Statement;
}

/** Adds new orders' ids, and moves ids down the levels a bounded slice per group, inside the group's transaction. */
export class OrderIdLevels {
  private readonly insert: Database.Statement;
  /** Ids added since the last settle(). */
  private added = 0;
  private readonly state: Database.Statement;
  private readonly update: Database.Statement;
  private readonly statements: LevelStatements[];

  /** `moveAtLeast`: the ids a group moves at least while a level drains (smaller in tests, to drain in many slices). */
  constructor(db: Database.Database, private readonly moveAtLeast = MOVE_AT_LEAST) {
    this.insert = db.prepare(`INSERT INTO ${levelTable(0)} (id_bytes, no) VALUES (?, ?)`);
    this.state = db.prepare('SELECT level, capacity, rows, drained_to FROM order_id_levels ORDER BY level').safeIntegers(true);
    this.update = db.prepare('UPDATE order_id_levels SET rows = ?, drained_to = ? WHERE level = ?');
    this.statements = levels.slice(0, -1).map((l) => {
      const from = levelTable(l);
      const into = levelTable(l + 1);
      return {
        sliceEnd: db.prepare(`SELECT id_bytes FROM ${from} WHERE id_bytes > ? ORDER BY id_bytes LIMIT 1 OFFSET ?`).pluck(),
        moveSlice: db.prepare(`INSERT INTO ${into} (id_bytes, no) SELECT id_bytes, no FROM ${from} WHERE id_bytes > ? AND id_bytes <= ? ORDER BY id_bytes`),
        deleteSlice: db.prepare(`DELETE FROM ${from} WHERE id_bytes > ? AND id_bytes <= ?`),
        moveRest: db.prepare(`INSERT INTO ${into} (id_bytes, no) SELECT id_bytes, no FROM ${from} WHERE id_bytes > ? ORDER BY id_bytes`),
        deleteRest: db.prepare(`DELETE FROM ${from} WHERE id_bytes > ?`),
        count: db.prepare(`SELECT count(*) FROM ${from}`).pluck().safeIntegers(true),
      };
    });
  }

  /** A new order's id, into level 0. */
  add(id: Uint8Array, no: number | bigint): void {
    this.insert.run(id, no);
    this.added += 1;
  }

  /** After a rolled-back transaction: its ids were never stored. */
  forget(): void {
    this.added = 0;
  }

  /**
   * At the end of a group's transaction: counts the ids added, then moves up
   * to max(moveAtLeast, MOVE_PER_NEW_ID * added) ids out of the levels that
   * drain, the lowest first. Returns the ids moved.
   */
  settle(): number {
    const added = this.added;
    this.added = 0;
    const states = this.state.all() as LevelState[];
    states[0]!.rows += BigInt(added);
    if (added > 0) this.update.run(states[0]!.rows, states[0]!.drained_to, 0);
    let budget = Math.max(this.moveAtLeast, MOVE_PER_NEW_ID * added);
    let moved = 0;
    for (const level of levels.slice(0, -1)) {
      const s = states[level]!;
      if (s.drained_to === null) {
        if (s.capacity === null || s.rows <= s.capacity) continue;
        s.drained_to = Buffer.alloc(0);
      }
      const n = this.move(s, states[level + 1]!, budget);
      moved += n;
      budget -= n;
      if (budget <= 0) break;
    }
    return moved;
  }

  /** Moves the next `n` ids of a draining level into the one below; the drain ends when none are left past it. */
  private move(from: LevelState, into: LevelState, n: number): number {
    const s = this.statements[Number(from.level)]!;
    const after = from.drained_to!;
    const end = s.sliceEnd.get(after, n - 1) as Buffer | undefined;
    let moved: number;
    if (end === undefined) {
      moved = s.moveRest.run(after).changes;
      s.deleteRest.run(after);
      from.drained_to = null;
      // What stays came in behind the drain; counted exactly, which also forgets the ids deleted meanwhile.
      from.rows = s.count.get() as bigint;
    } else {
      moved = s.moveSlice.run(after, end).changes;
      s.deleteSlice.run(after, end);
      from.drained_to = end;
      from.rows -= BigInt(moved);
    }
    into.rows += BigInt(moved);
    this.update.run(from.rows, from.drained_to, from.level);
    this.update.run(into.rows, into.drained_to, into.level);
    return moved;
  }
}
