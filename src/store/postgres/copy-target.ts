/**
 * A PostgreSQL database as a copy's target. The mark (COPY_MARK, a table
 * every session checks as it opens: ./connection.ts) is committed before the
 * schema is created by the store's own migrations. The rows are one
 * transaction; once they are committed, the indexes are built on sessions
 * of their own (./copy-indexes.ts) while the copy reads the rows back for
 * its check, and the mark is dropped in the last transaction. A copy cut
 * short anywhere leaves a marked database; the next copy drops what the last
 * one created (every table but those that were there before it) and starts over.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { InternalError, StoreNotEmptyError } from '../../errors.js';
import { ARCHIVE, parseRetention } from '../../domain/retention.js';
import type { CopyTarget, RowBatches, TableReader } from '../copy/contract.js';
import { KEPT_HISTORY, type ColumnShape, type NeutralRow, type NeutralValue, type TableShape } from '../copy/neutral.js';
import { BinaryCopyWriter, HEADER_BYTES } from './copy-binary.js';
import { buildIndexes, type IndexBuild, type IndexBuilds } from './copy-indexes.js';
import { COPY_MARK, checkSession, connect, displayUrl } from './connection.js';
import { postgresTableReader, quoted, RESTING } from './copy-tables.js';
import { blocksPerSecond, partitionSpan, WriterPartitions } from './partitions.js';
import { fromPostgres } from './errors.js';
import { migrate } from './schema.js';

/** Memory each index build may sort in: built once, after the rows. */
const INDEX_BUILD_MEMORY = '1GB';
/** The target's sessions: a copy's statements run as long as they take. */
const SESSION_SETTINGS = `SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0; SET maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`;
const TRAILER = Buffer.from([0xff, 0xff]);

/**
 * Marks the database, or finds it marked by a copy cut short and drops what
 * that one created. A database that holds our schema unmarked is refused,
 * nothing changed.
 */
async function markOrReset(client: pg.Client, url: string, source: string): Promise<void> {
  const { rows } = await client.query<{ marked: boolean; ours: boolean }>(
    `SELECT to_regclass('${COPY_MARK}') IS NOT NULL AS marked, to_regclass('schema_migrations') IS NOT NULL AS ours`,
  );
  const { marked, ours } = rows[0]!;
  if (!marked && ours) {
    throw new StoreNotEmptyError(`${displayUrl(url)} already holds a ledger-query store: copy into an empty or new database`);
  }
  await client.query('BEGIN');
  if (marked) {
    const { rows: made } = await client.query<{ name: string }>(`
      SELECT c.relname AS name FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND c.relname <> '${COPY_MARK}' AND NOT EXISTS (SELECT 1 FROM ${COPY_MARK} m WHERE c.relname::text = ANY (m.kept))`);
    for (const { name } of made) await client.query(`DROP TABLE IF EXISTS ${quoted(name)} CASCADE`);
    await client.query(`UPDATE ${COPY_MARK} SET source = $1, started_at = now()`, [source]);
  } else {
    await client.query(`
      CREATE TABLE ${COPY_MARK} (source TEXT NOT NULL, started_at TIMESTAMPTZ NOT NULL, kept TEXT[] NOT NULL);
      COMMENT ON TABLE ${COPY_MARK} IS 'ledger-query copy: this database is incomplete until the copy drops this table'`);
    // Tables that were there before (not ours) are left alone by a copy that starts over.
    await client.query(`
      INSERT INTO ${COPY_MARK} (source, started_at, kept)
      SELECT $1, now(), coalesce(array_agg(relname::text), '{}') FROM pg_class
      WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND relname <> '${COPY_MARK}'`, [source]);
  }
  await client.query('COMMIT');
}

export async function openPostgresCopyTarget(url: string, source: string): Promise<CopyTarget> {
  let client: pg.Client | undefined;
  try {
    client = await connect(url, 'copy target');
    client.on('error', () => {});
    await checkSession(client, { allowIncomplete: true });
    await markOrReset(client, url, source);
    await migrate(client);
    await client.query(SESSION_SETTINGS);
    await client.query('BEGIN');
    const reader = await postgresTableReader(client, url);
    // Indexes the migrations made that no constraint owns: dropped while the rows load, built after them.
    const { rows } = await client.query<{ name: string; sql: string; table: string }>(`
      SELECT ic.relname AS name, pg_get_indexdef(i.indexrelid) AS sql, c.relname AS table
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class c ON c.oid = i.indrelid
      WHERE ic.relnamespace = current_schema()::regnamespace AND NOT ic.relispartition
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`);
    for (const { name } of rows) await client.query(`DROP INDEX ${quoted(name)}`);
    return new PostgresCopyTarget(client, url, reader, rows);
  } catch (e) {
    await client?.end().catch(() => undefined);
    throw fromPostgres(e, url);
  }
}

class PostgresCopyTarget implements CopyTarget {
  readonly tables: readonly TableShape[];
  private builds: IndexBuilds | undefined;

  constructor(
    private readonly client: pg.Client, private readonly url: string, readonly reader: TableReader,
    private readonly indexes: readonly { sql: string; table: string }[],
  ) {
    this.tables = reader.tables;
  }

  async load(table: TableShape, batches: RowBatches): Promise<void> {
    // The rows a migration put there (retention's one row) give way to the source's.
    await this.client.query(`DELETE FROM ${quoted(table.name)}`);
    if (table.name === KEPT_HISTORY) return this.loadHistory(table, batches);
    const into = new CopyIn(this.client, table.name, table.columns);
    for await (const rows of batches) await into.write(rows, 0, rows.length);
    await into.end();
  }

  /**
   * Kept history, in (height, seq) order: the rows below the oldest kept
   * block are resting rows; the others go into history partitions, which the
   * writer's own code (./partitions.ts) adds as the heights reach them,
   * sized by the retention and the blocks' rate the source's rows give.
   */
  private async loadHistory(table: TableShape, batches: RowBatches): Promise<void> {
    const { rows: state } = await this.client.query<{ below: string; setting: string }>(
      'SELECT pruned_below::text AS below, setting FROM retention WHERE only_row = 1',
    );
    const below = BigInt(state[0]?.below ?? '0');
    const retention = parseRetention(state[0]?.setting ?? 'archive') ?? ARCHIVE;
    const partitions = new WriterPartitions(async (c) => partitionSpan(retention, await blocksPerSecond(c)));
    const heightAt = table.columns.findIndex((c) => c.name === 'height');
    if (heightAt === -1) throw new InternalError(`${KEPT_HISTORY} has no column height`);
    let into: CopyIn | undefined;
    /** Heights below this go where `into` writes: the oldest kept block for resting rows, the partitions' end for the others. */
    let end = 0n;
    for await (const rows of batches) {
      let from = 0;
      for (let i = 0; i <= rows.length; i++) {
        // A number or a bigint: compared with the bigints below exactly.
        const height = i < rows.length ? (rows[i]![heightAt] as number | bigint) : undefined;
        if (height !== undefined && into !== undefined && height < end) continue;
        if (into !== undefined) await into.write(rows, from, i);
        from = i;
        if (height === undefined) break;
        // A COPY holds the session: ended before the next partition is added.
        await into?.end();
        if (height < below) {
          into = new CopyIn(this.client, RESTING, table.columns);
          end = below;
        } else {
          await partitions.cover(this.client, BigInt(height), BigInt(height));
          end = (await partitions.list(this.client)).at(-1)!.to;
          into = new CopyIn(this.client, table.name, table.columns);
        }
      }
    }
    await (into ?? new CopyIn(this.client, table.name, table.columns)).end();
  }

  async finishLoad(): Promise<void> {
    // Identity columns (parties, markets) go on numbering after the copied rows.
    const { rows } = await this.client.query<{ table: string; column: string }>(`
      SELECT c.relname AS table, a.attname AS column FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND a.attidentity <> ''`);
    for (const { table, column } of rows) {
      await this.client.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(${quoted(column)}), 0) + 1, false) FROM ${quoted(table)}`,
        [quoted(table), column],
      );
    }
    const { rows: sizes } = await this.client.query<{ table: string; bytes: string }>(`
      SELECT c.relname AS table, (CASE WHEN c.relkind = 'p'
          THEN (SELECT coalesce(sum(pg_relation_size(i.inhrelid)), 0) FROM pg_inherits i WHERE i.inhparent = c.oid)
          ELSE pg_relation_size(c.oid) END)::text AS bytes
      FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`);
    const bytes = new Map(sizes.map((r) => [r.table, Number(r.bytes)]));
    // The rows committed, marked: other sessions can build on them, and every command still refuses the database.
    await this.client.query('COMMIT');
    const builds: IndexBuild[] = this.indexes.map(({ sql, table }) => ({
      // A partitioned table's index reads ON ONLY, which would leave its partitions without it.
      sql: sql.replace(/ ON ONLY /, ' ON '), bytes: bytes.get(table) ?? 0,
    }));
    this.builds = buildIndexes(this.url, builds, SESSION_SETTINGS);
  }

  async complete(): Promise<void> {
    await this.builds?.done;
    await this.client.query('BEGIN');
    // The planner's statistics, which autovacuum would gather in its own time; before the mark goes, so that the
    // target becomes whole as the copy's last step.
    await this.client.query('ANALYZE');
    await this.client.query(`DROP TABLE ${COPY_MARK}`);
    await this.client.query('COMMIT');
    await this.client.end();
  }

  /**
   * Cancels the index builds, and ends the session: the server rolls back its
   * transaction (a ROLLBACK would queue behind a COPY cut off midway).
   */
  async abandon(): Promise<void> {
    await this.builds?.cancel();
    await this.client.end().catch(() => undefined);
  }
}

/** One COPY in binary into a table, batches encoded as its columns take them and written as the server takes them in. */
class CopyIn {
  private readonly stream;
  private readonly encode: Encode[];
  private first = true;
  private lastBytes = 1 << 20;

  constructor(client: pg.Client, table: string, columns: readonly ColumnShape[]) {
    this.stream = client.query(copyFrom(`COPY ${quoted(table)} (${columns.map((c) => quoted(c.name)).join(', ')}) FROM STDIN (FORMAT binary)`));
    this.encode = columns.map((c) => encoderOf(c.type));
  }

  /** Rows `from` up to `to` (exclusive) of `rows`. */
  async write(rows: readonly NeutralRow[], from: number, to: number): Promise<void> {
    if (from === to) return;
    const out = new BinaryCopyWriter(this.lastBytes);
    for (let r = from; r < to; r++) {
      const row = rows[r]!;
      out.row(row.length);
      for (let i = 0; i < row.length; i++) {
        const v = row[i]!;
        if (v === null) out.null();
        else this.encode[i]!(out, v);
      }
    }
    const data = out.finish();
    this.lastBytes = data.length + (data.length >> 3);
    // One header opens the stream and one trailer closes it: each batch's own are cut off.
    const body = data.subarray(this.first ? 0 : HEADER_BYTES, data.length - TRAILER.length);
    this.first = false;
    if (!this.stream.write(body)) await once(this.stream, 'drain');
  }

  async end(): Promise<void> {
    if (this.first) this.stream.write(new BinaryCopyWriter().finish().subarray(0, HEADER_BYTES));
    this.stream.end(TRAILER);
    await finished(this.stream);
  }
}

type Encode = (out: BinaryCopyWriter, v: NonNullable<NeutralValue>) => void;

/** How a neutral value is written into a column of `type`, in that type's binary form. */
function encoderOf(type: string): Encode {
  if (type.startsWith('numeric')) return (out, v) => out.numeric(v as number | bigint);
  switch (type) {
    case 'smallint': return (out, v) => out.int2(Number(v));
    case 'integer': return (out, v) => out.int4(Number(v));
    case 'bigint': return (out, v) => out.int8(v as number | bigint);
    case 'text': return (out, v) => out.text(v as string);
    default: return (out, v) => out.bytea(v as Uint8Array);
  }
}
