/**
 * The PostgreSQL side of a copy that both the source and the target need:
 * the tables' shapes read from the catalogue (a partitioned table as one
 * table, its partitions left out: rows are read and written through the
 * parent), and each table's rows read as neutral rows (../copy/neutral.ts),
 * in key order or as a sequential scan gives them, through COPY ... TO
 * STDOUT in binary.
 */
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { InternalError } from '../../errors.js';
import type { ReadOrder, RowBatches, TableReader } from '../copy/contract.js';
import { KEPT_HISTORY, type NeutralKind, type NeutralRow, type NeutralValue, type TableShape } from '../copy/neutral.js';
import { BinaryCopyReader, type FieldDecoder } from './copy-binary-reader.js';
import { COPY_MARK } from './connection.js';
import { fromPostgres } from './errors.js';

/** The schema's own bookkeeping, and a copy's mark: never copied. */
export const NOT_COPIED = ['schema_migrations', COPY_MARK];

/**
 * Columns PostgreSQL keeps for its own pruning (the last change: ./schema.ts
 * migration 7): a copy never carries them; rows copied in have none, and
 * pruning probes for their latest rows, as for orders stored before.
 */
export const KEPT_FOR_PRUNING: ReadonlyMap<string, string> = new Map([['orders_current', 'last_height']]);

/** The resting rows: read and written as part of kept history (../copy/neutral.ts KEPT_HISTORY), not a table of their own. */
export const RESTING = 'orders_history_resting';

/** The oldest kept block's height, as the view orders_history_kept reads it. */
const PRUNED_BELOW = '(SELECT pruned_below FROM retention WHERE only_row = 1)';

/** Where a logical table's rows are read from: kept history through the view readers see it by. */
const readFrom = (table: TableShape) => quoted(table.name === KEPT_HISTORY ? 'orders_history_kept' : table.name);

/** Rows per batch: a few MB. */
const BATCH_ROWS = 8192;

export const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

function kindOf(type: string): NeutralKind | undefined {
  if (type.startsWith('numeric')) return 'u64';
  if (type === 'bigint' || type === 'integer' || type === 'smallint') return 'int';
  if (type === 'text') return 'text';
  if (type === 'bytea') return 'bytes';
  return undefined;
}

/**
 * Every logical table of the current schema: each table but NOT_COPIED and
 * the resting rows (a partitioned table is one, its partitions left out),
 * keyed by its primary key, else its first whole unique index.
 */
export async function tableShapes(client: pg.ClientBase): Promise<TableShape[]> {
  const { rows: columns } = await client.query<{ table: string; column: string; type: string }>(`
    SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      AND a.attnum > 0 AND NOT a.attisdropped AND NOT (c.relname = ANY ($1))
    ORDER BY c.relname, a.attnum`, [[...NOT_COPIED, RESTING]]);
  const { rows: keys } = await client.query<{ table: string; columns: string[] }>(`
    SELECT c.relname AS table,
      array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k (n, o)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o) AS columns
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
    ORDER BY c.relname, i.indisprimary DESC, ic.relname`);
  const shapes = new Map<string, TableShape>();
  for (const { table, column, type } of columns) {
    if (KEPT_FOR_PRUNING.get(table) === column) continue;
    const kind = kindOf(type);
    if (kind === undefined) throw new InternalError(`cannot copy column ${table}.${column} of type ${type}`);
    let shape = shapes.get(table);
    if (shape === undefined) shapes.set(table, (shape = { name: table, columns: [], key: [] }));
    shape.columns.push({ name: column, kind, type });
  }
  for (const shape of shapes.values()) {
    shape.key = keys.find((k) => k.table === shape.name)?.columns ?? shape.columns.map((c) => c.name);
  }
  return [...shapes.values()];
}

/** How each column's binary field reads as a neutral value; NUMERIC comes as text (cast in the query). */
function decoderOf(type: string): FieldDecoder<NonNullable<NeutralValue>> {
  // An integer as a number where a double holds it exactly (../copy/neutral.ts), else a bigint.
  if (type.startsWith('numeric')) return (d, s, e) => (e - s <= 15 ? Number(d.toString('latin1', s, e)) : BigInt(d.toString('latin1', s, e)));
  switch (type) {
    case 'smallint': return (d, s) => d.readInt16BE(s);
    case 'integer': return (d, s) => d.readInt32BE(s);
    case 'bigint': return (d, s) => {
      const high = d.readInt32BE(s);
      // |value| < 2^53 exactly when the high word is within +-2^21.
      return high >= -(2 ** 21) && high < 2 ** 21 ? high * 2 ** 32 + d.readUInt32BE(s + 4) : d.readBigInt64BE(s);
    };
    case 'text': return (d, s, e) => d.toString('utf8', s, e);
    // A view of the bytes as they came: the chunk is not reused.
    case 'bytea': return (d, s, e) => d.subarray(s, e);
    default: throw new InternalError(`cannot read a column of type ${type}`);
  }
}

/**
 * The statements that read a table's rows, `table`'s columns in its order,
 * in `order`, one after another. Text keys are ordered byte by byte
 * (COLLATE "C"), as SQLite orders them, so that both backends read a table
 * in one order; 'stored' is a sequential scan, with no sort. Kept history
 * in key order is two reads, each along its tables' keys: the resting rows,
 * which are all below the oldest kept block (pruning moves a row there in
 * the transaction that moves the oldest kept block past it), then the
 * partitions' rows from that block on.
 */
export function postgresReadQueries(table: TableShape, order: ReadOrder): string[] {
  const select = table.columns.map((c) => (c.kind === 'u64' ? `${quoted(c.name)}::text` : quoted(c.name))).join(', ');
  const orderBy = order === 'stored' ? '' : ` ORDER BY ${order.map((k) => {
    const column = table.columns.find((c) => c.name === k);
    // Qualified: a bare name would be the output column, NUMERIC cast to text, and order as text.
    return column?.kind === 'text' ? `r.${quoted(k)} COLLATE "C"` : `r.${quoted(k)}`;
  }).join(', ')}`;
  return table.name === KEPT_HISTORY && order !== 'stored'
    ? [`SELECT ${select} FROM ${quoted(RESTING)} AS r${orderBy}`, `SELECT ${select} FROM orders_history AS r WHERE r.height >= ${PRUNED_BELOW}${orderBy}`]
    : [`SELECT ${select} FROM ${readFrom(table)} AS r${orderBy}`];
}

/** A table's rows, `table`'s columns in its order, in `order` (postgresReadQueries), in batches. */
export async function* postgresRows(client: pg.ClientBase, table: TableShape, order: ReadOrder): RowBatches {
  const decoders = table.columns.map((c) => decoderOf(c.type));
  const queries = postgresReadQueries(table, order);
  const heightAt = table.columns.findIndex((c) => c.name === 'height');
  let batch: NeutralRow[] = [];
  let last: NeutralRow | undefined;
  // Along the partitions' keys, index scans stream as fast as the copy takes rows; a sort takes a core and temporary files first.
  if (queries.length > 1) await client.query('SET enable_sort = off');
  for (const [i, query] of queries.entries()) {
    const stream = client.query(copyTo(`COPY (${query}) TO STDOUT (FORMAT binary)`));
    const reader = new BinaryCopyReader(decoders.length);
    const below = i > 0 ? last : undefined;
    let first = below !== undefined;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (const row of reader.decode(chunk, decoders)) {
        if (first && BigInt(row[heightAt] as number | bigint) <= BigInt(below![heightAt] as number | bigint)) {
          throw new InternalError(`${KEPT_HISTORY}: a resting row is not below the oldest kept block, so the two reads are not in key order`);
        }
        first = false;
        batch.push(row);
        if (batch.length >= BATCH_ROWS) {
          yield batch;
          batch = [];
        }
        last = row;
      }
    }
    reader.end();
  }
  if (queries.length > 1) await client.query('RESET enable_sort');
  if (batch.length > 0) yield batch;
}

/** Reads the tables on `client`, in whatever transaction it is in (the source's snapshot, or the target's own). */
export async function postgresTableReader(client: pg.ClientBase, url: string): Promise<TableReader> {
  return {
    tables: await tableShapes(client),
    rows: (table, order) => postgresRows(client, table, order),
    count: async (table) => {
      const { rows } = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${readFrom(table)}`);
      return Number(rows[0]!.n);
    },
    fault: (e) => fromPostgres(e, url),
  };
}
