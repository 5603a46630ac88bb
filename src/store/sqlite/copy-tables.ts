/**
 * The embedded store's side of a copy that both the source and the target
 * need: its tables' shapes read from the schema (sqlite_master and the
 * table pragmas), and each table's rows read as neutral rows
 * (../copy/neutral.ts), in key order or in the order the table stores them:
 * a rowid table's rowid order, a WITHOUT ROWID table's key order.
 */
import type Database from 'better-sqlite3';
import { InternalError } from '../../errors.js';
import type { ReadOrder, RowBatches, TableReader } from '../copy/contract.js';
import { fromSqlite } from './errors.js';
import { integerOf, MAX_SAFE_SQL, type NeutralKind, type NeutralRow, type NeutralValue, type TableShape } from '../copy/neutral.js';
import { u64 } from '../rows.js';
import { INDEXED_BY_ID_LEVELS, ORDER_ID_TABLES } from './order-ids.js';

/** Declared types (STRICT tables) -> kinds. ANY holds the unsigned 64-bit values (../rows.ts u64()). */
const KINDS: Record<string, NeutralKind> = { INTEGER: 'int', ANY: 'u64', TEXT: 'text', BLOB: 'bytes' };

/**
 * Columns the embedded store numbers for itself (./order-numbers.ts): a
 * copy never carries them, and each target numbers its own orders as they
 * load (./copy-target.ts).
 */
export const NUMBERED_HERE: ReadonlyMap<string, string> = new Map([['orders_current', 'no'], ['orders_history', 'order_no']]);


/**
 * A copy's source is read sequentially and in bulk: through a memory map
 * rather than a small cache, as much of the file as SQLite maps (this build
 * of better-sqlite3 maps at most 2 GB, SQLITE_MAX_MMAP_SIZE, whatever is
 * asked; beyond it pages are read as usual).
 */
export const SOURCE_MMAP_BYTES = 2 ** 34;

/** Rows per batch: a few MB. */
const BATCH_ROWS = 8192;

/** A name as an SQL identifier. */
export const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

export interface ColumnInfo { name: string; type: string; pk: bigint | number }

/**
 * Every table of the store, SQLite's own and the id levels left out (an
 * index: a copy between embedded stores carries them with the table they
 * index, any other target builds its own), each keyed by its primary key,
 * else by the id the levels keep unique (INDEXED_BY_ID_LEVELS), else by its
 * first whole unique index; without the columns it numbers for itself
 * (NUMBERED_HERE).
 */
export function tableShapes(db: Database.Database, schema = 'main'): TableShape[] {
  const names = db.prepare(`SELECT name FROM ${quoted(schema)}.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`)
    .pluck().all() as string[];
  return names.filter((name) => !ORDER_ID_TABLES.has(name)).map((name) => {
    const info = columnsOf(db, schema, name).filter((c) => c.name !== NUMBERED_HERE.get(name));
    const columns = info.map((c) => {
      const kind = KINDS[c.type.toUpperCase()];
      if (kind === undefined) throw new InternalError(`cannot copy column ${name}.${c.name} of type ${c.type}`);
      return { name: c.name, kind, type: c.type.toUpperCase() };
    });
    const pk = info.filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk)).map((c) => c.name);
    const key = pk.length > 0 ? pk : name === INDEXED_BY_ID_LEVELS ? ['id_bytes'] : uniqueKey(db, schema, name);
    return { name, columns, key: key ?? columns.map((c) => c.name) };
  });
}

/** Every column of a table of `schema` (a connection's main file, or one it attached), the store's own numbers included. */
export function columnsOf(db: Database.Database, schema: string, table: string): ColumnInfo[] {
  return db.prepare(`PRAGMA ${quoted(schema)}.table_info(${quoted(table)})`).all() as ColumnInfo[];
}

function uniqueKey(db: Database.Database, schema: string, table: string): string[] | undefined {
  const indexes = db.prepare(`PRAGMA ${quoted(schema)}.index_list(${quoted(table)})`).all() as { name: string; unique: bigint | number; partial: bigint | number }[];
  const index = indexes.filter((i) => Number(i.unique) === 1 && Number(i.partial) === 0).sort((a, b) => a.name.localeCompare(b.name))[0];
  if (index === undefined) return undefined;
  return (db.prepare(`PRAGMA ${quoted(schema)}.index_info(${quoted(index.name)})`).all() as { name: string }[]).map((c) => c.name);
}

/**
 * Rows per page. A page is read with one call into the driver (all()),
 * where iterate() crosses into it once a row, which took about twice the
 * time a row (BENCHMARKS.md, "Indexes carried, pages read").
 */
export const PAGE_ROWS = 4096;

/**
 * A table's rows, `table`'s columns in its order, in `order`, in batches;
 * each value as the neutral form has it. Read in pages along the key the
 * table is stored by where `order` is that key (its rowid, or a WITHOUT
 * ROWID table's primary key, whose columns are never NULL), each page
 * seeking past the last row of the one before; else in one pass.
 */
export async function* sqliteRows(db: Database.Database, table: TableShape, order: ReadOrder, schema = 'main', pageRows = PAGE_ROWS): RowBatches {
  // An integer comes as a number where a double holds it exactly, else as its decimal text (made a bigint here): no bigint per value.
  // Bytes come as hex text, made bytes here: the driver gives each blob a Buffer of its own, which cost
  // more than the rest of a history row (BENCHMARKS.md, "Copying a store"); Buffer.from takes small ones from a pool.
  const columns = table.columns.map((c) => {
    const q = quoted(c.name);
    // hex(NULL) is empty text: NULL stays NULL.
    if (c.kind === 'bytes') return `CASE WHEN ${q} IS NULL THEN NULL ELSE hex(${q}) END`;
    return c.kind === 'int' || c.kind === 'u64' ? safeInteger(q) : q;
  });
  const integerAt = table.columns.flatMap((c, i) => (c.kind === 'u64' || c.kind === 'int' ? [i] : []));
  const bytesAt = table.columns.flatMap((c, i) => (c.kind === 'bytes' ? [i] : []));
  const pages = pagedBy(db, schema, table, order);
  if (pages === undefined) {
    const statement = db.prepare(`SELECT ${columns.join(', ')} FROM ${fromInOrder(schema, table.name, order)}`).raw(true).safeIntegers(false);
    let batch: NeutralRow[] = [];
    for (const row of statement.iterate() as IterableIterator<NeutralRow>) {
      batch.push(neutral(row, integerAt, bytesAt));
      if (batch.length === BATCH_ROWS) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
    return;
  }
  // A page seeks past the last row's key, bound back as stored: its rowid, read after the row's own columns, or its primary key's columns.
  const { key, rowid } = pages;
  const select = `SELECT ${columns.join(', ')}${rowid ? `, ${safeInteger('rowid')}` : ''} FROM ${quoted(schema)}.${quoted(table.name)}`;
  const keyList = (rowid ? ['rowid'] : key.map(quoted)).join(', ');
  const orderBy = `ORDER BY ${keyList} LIMIT ${pageRows}`;
  const first = db.prepare(`${select} ${orderBy}`).raw(true).safeIntegers(false);
  const next = db.prepare(`${select} WHERE (${keyList}) > (${(rowid ? ['?'] : key.map(() => '?')).join(', ')}) ${orderBy}`).raw(true).safeIntegers(false);
  const keyAt = rowid ? [table.columns.length] : key.map((k) => table.columns.findIndex((c) => c.name === k));
  const width = table.columns.length;
  let rows = first.all() as NeutralRow[];
  while (rows.length > 0) {
    const last = rows[rows.length - 1]!;
    const seek = keyAt.map((i) => storedKey(last[i] ?? null, i < width ? table.columns[i]!.kind : 'int'));
    for (const row of rows) {
      if (rowid) row.length = width;
      neutral(row, integerAt, bytesAt);
    }
    yield rows;
    if (rows.length < pageRows) return;
    rows = next.all(...seek) as NeutralRow[];
  }
}

/** An integer as a number where a double holds it exactly, else as its decimal text. */
const safeInteger = (q: string) => `CASE WHEN ${q} BETWEEN -${MAX_SAFE_SQL} AND ${MAX_SAFE_SQL} THEN ${q} ELSE CAST(${q} AS TEXT) END`;

/** A row as read (integers past a double's reach as text, bytes as hex) in the neutral form, in place. */
function neutral(row: NeutralRow, integerAt: readonly number[], bytesAt: readonly number[]): NeutralRow {
  for (const i of integerAt) if (typeof row[i] === 'string') row[i] = integerOf(row[i]);
  for (const i of bytesAt) if (typeof row[i] === 'string') row[i] = Buffer.from(row[i] as string, 'hex');
  return row;
}

/**
 * A key's value as read, as the driver must bind it to compare as stored: an
 * integer read as text is an INTEGER where int64 holds it, else the TEXT an
 * ANY column keeps a larger u64 as (../rows.ts u64()); a number compares
 * with an INTEGER exactly, below 2^53; bytes (read as hex) as a BLOB.
 */
function storedKey(v: NeutralValue, kind: NeutralKind): NeutralValue {
  if (typeof v !== 'string') return v;
  if (kind === 'bytes') return Buffer.from(v, 'hex');
  return kind === 'int' || kind === 'u64' ? u64(BigInt(v)) : v;
}

/**
 * The key to page `table` along in `order`, where there is one: a rowid
 * table read as stored, by its rowid; a WITHOUT ROWID table read as stored
 * or in its primary key's order, by that key.
 */
function pagedBy(db: Database.Database, schema: string, table: TableShape, order: ReadOrder): { key: readonly string[]; rowid: boolean } | undefined {
  const listed = db.prepare(`PRAGMA ${quoted(schema)}.table_list(${quoted(table.name)})`).get() as { wr: number | bigint } | undefined;
  if (listed === undefined) return undefined;
  if (Number(listed.wr) === 0) return order === 'stored' ? { key: [], rowid: true } : undefined;
  const pk = columnsOf(db, schema, table.name).filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk)).map((c) => c.name);
  const inOrder = order === 'stored' || (order.length === pk.length && order.every((c, i) => c === pk[i]));
  // Every key column must be one the copy reads: its value bounds the next page.
  return inOrder && pk.every((k) => table.columns.some((c) => c.name === k)) ? { key: pk, rowid: false } : undefined;
}

/**
 * A table and the clause that reads it in `order`. Without ORDER BY, SQLite
 * walks the table's own B-tree: a rowid table is not read through an index,
 * a read per row. Orders in id order come through the id levels, merged
 * along their keys (MERGE (UNION ALL)); LIMIT keeps SQLite from folding
 * that merge into the join and sorting every row.
 */
function fromInOrder(schema: string, table: string, order: ReadOrder): string {
  const from = `${quoted(schema)}.${quoted(table)}`;
  if (order === 'stored') return from;
  if (table === INDEXED_BY_ID_LEVELS && order.length === 1 && order[0] === 'id_bytes') {
    return `(SELECT id_bytes AS lq_id, no AS lq_no FROM ${quoted(schema)}.order_ids ORDER BY id_bytes LIMIT -1) AS lq_ids ` +
      `JOIN ${from} ON ${from}.no = lq_ids.lq_no ORDER BY lq_ids.lq_id`;
  }
  return `${from} ORDER BY ${order.map(quoted).join(', ')}`;
}

/** Reads the tables of an open connection (the source's snapshot, or a target's file to check it); `schema`: the file, main or one attached. */
export function sqliteTableReader(db: Database.Database, path: string, schema = 'main'): TableReader {
  return {
    tables: tableShapes(db, schema),
    rows: (table, order) => sqliteRows(db, table, order, schema),
    count: async (table) => Number(db.prepare(`SELECT count(*) FROM ${quoted(schema)}.${quoted(table.name)}`).pluck().get() as bigint),
    fault: (e) => fromSqlite(e, path),
  };
}
