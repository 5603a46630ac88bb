/**
 * The neutral row form: a table's rows as neither backend lays them out, so
 * that a copy between backends converts each row once, through this form,
 * and its check hashes the same values on both sides. Each backend reads its
 * own tables into it and writes it into its own tables
 * (../<backend>/copy-source.ts, copy-target.ts); shapes are read from each
 * store's schema, never listed here.
 */
import { CopyMismatchError } from '../../errors.js';

/**
 * What a column holds, whichever backend: a signed 64-bit integer or
 * narrower; an unsigned 64-bit value (SQLite's ANY as u64() stores it,
 * PostgreSQL's NUMERIC(20)); text; bytes.
 */
export type NeutralKind = 'int' | 'u64' | 'text' | 'bytes';

/**
 * An int or u64 is a number when it is a safe integer (nearly every value:
 * a bigint each was most of a copy's garbage), else a bigint; text a
 * string, bytes a Uint8Array; null is null. A number and a bigint of the
 * same value are the same value (./table-hash.ts hashes them alike).
 */
export type NeutralValue = number | bigint | string | Uint8Array | null;
export type NeutralRow = NeutralValue[];

export interface ColumnShape {
  name: string;
  kind: NeutralKind;
  /** The backend's own type, as its schema declares it (how a target writes the column). */
  type: string;
}

/**
 * A logical table as a store's schema has it: its columns, and the columns
 * of its key, the order rows are read and hashed in. Most are a table of
 * each backend; kept history (KEPT_HISTORY) is whatever physical tables
 * each backend keeps it in.
 */
export interface TableShape {
  name: string;
  columns: ColumnShape[];
  key: string[];
}

/**
 * The plan of one table's copy: the source's table, with its columns in the
 * order both sides read and write them and the source's key, which orders
 * both sides' reads; and the target's table, the same columns in that order.
 */
export interface TablePlan {
  source: TableShape;
  target: TableShape;
}

/**
 * The logical table of kept history: the embedded store's orders_history;
 * on PostgreSQL, the view orders_history_kept over its history partitions
 * and its resting rows. A copy moves what readers see, never the rows a
 * partition still holds below the oldest kept block.
 */
export const KEPT_HISTORY = 'orders_history';

/**
 * Tables loaded before the others, in this order: a PostgreSQL target puts
 * kept history's rows below the oldest kept block among the resting rows and
 * sizes the partitions of the rest by the retention and the blocks' rate;
 * an embedded target names each history row's order by the number its
 * current state took as it loaded.
 */
const LOADED_FIRST = ['retention', 'blocks', 'orders_current'];

const loadRank = (name: string) => {
  const i = LOADED_FIRST.indexOf(name);
  return i === -1 ? LOADED_FIRST.length : i;
};

const describe = (t: TableShape) => t.columns.map((c) => `${c.name} ${c.kind}`).join(', ');

/**
 * Pairs each source table with the target's of the same name, its columns in
 * the source's order. Both stores' schemas come from the same version of
 * ledger-query, so they must hold the same tables, columns and kinds; a
 * difference names the table. Plans come in the order tables are loaded.
 */
export function planTables(source: readonly TableShape[], target: readonly TableShape[]): TablePlan[] {
  const byName = new Map(target.map((t) => [t.name, t]));
  const missing = target.filter((t) => !source.some((s) => s.name === t.name)).map((t) => t.name);
  if (missing.length > 0) throw new CopyMismatchError(`the source store has no table ${missing.join(', ')}, which the target's schema has`);
  const ordered = [...source].sort((a, b) => loadRank(a.name) - loadRank(b.name));
  return ordered.map((s) => {
    const t = byName.get(s.name);
    if (t === undefined) throw new CopyMismatchError(`the target's schema has no table ${s.name}, which the source store has`);
    const columns = s.columns.map((c) => t.columns.find((x) => x.name === c.name && x.kind === c.kind));
    if (columns.some((c) => c === undefined) || t.columns.length !== s.columns.length) {
      throw new CopyMismatchError(`table ${s.name} differs: source (${describe(s)}), target (${describe(t)})`);
    }
    return { source: s, target: { ...t, columns: columns as ColumnShape[] } };
  });
}

/** An integer read as a number where it is safe and as decimal text past that (./neutral.ts), as a neutral value. */
export function integerOf(v: unknown): number | bigint {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? v : BigInt(v as string);
}

/** The largest integer a double holds exactly, as SQL text. */
export const MAX_SAFE_SQL = String(Number.MAX_SAFE_INTEGER);
