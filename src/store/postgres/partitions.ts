/**
 * PostgreSQL's history partitions: orders_history is partitioned by block
 * height range (migration 5, ./history-partitions.ts), each partition a
 * bounded span of blocks, so that a window's old history goes by DROP of a
 * whole partition rather than by DELETE (docs/compatibility.md, section 13).
 * The writer attaches a partition before a group's history needs it, and
 * its pruner drops those wholly below the oldest kept block.
 */
import type pg from 'pg';
import type { Retention } from '../../domain/retention.js';

/** Blocks an archive store's partition spans (~12 days at a block a second): a year is ~30 partitions. */
export const ARCHIVE_SPAN = 1_000_000n;
/** At least this many blocks a partition, however short the window. */
const MIN_SPAN = 16n;
/**
 * Partitions per window: the store keeps at most a partition's span more
 * than the window, an eighth (its size is flat within that once the window
 * is full), and a read of one order's history visits about this many.
 */
const PARTITIONS_PER_WINDOW = 8n;

/** A partition's span of heights, from inclusive, to exclusive. */
export interface Partition {
  name: string;
  from: bigint;
  to: bigint;
}

/**
 * The span of the next partition: an eighth of the window in blocks, at the
 * rate blocks came at (blocks per second, measured by the caller), and
 * ARCHIVE_SPAN under archive.
 */
export function partitionSpan(retention: Retention, blocksPerSecond: number): bigint {
  if (retention.kind === 'archive') return ARCHIVE_SPAN;
  const windowBlocks = BigInt(Math.ceil((Number(retention.ns) / 1e9) * blocksPerSecond));
  const span = windowBlocks / PARTITIONS_PER_WINDOW;
  return span < MIN_SPAN ? MIN_SPAN : span > ARCHIVE_SPAN ? ARCHIVE_SPAN : span;
}

/** Blocks per second over the last stored blocks (at most 1000 of them); 1 until two are stored: the rate partitionSpan takes. */
export async function blocksPerSecond(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ blocks: string; ns: string | null }>(`
    SELECT (count(*) - 1)::text AS blocks, (max(time) - min(time))::text AS ns
    FROM (SELECT time FROM blocks ORDER BY height DESC LIMIT 1000) AS recent`);
  const blocks = Number(rows[0]?.blocks ?? 0);
  const seconds = Number(rows[0]?.ns ?? 0) / 1e9;
  return blocks > 0 && seconds > 0 ? blocks / seconds : 1;
}

export const partitionName = (from: bigint) => `orders_history_from_${from}`;

/** Every partition of orders_history, by height. */
export async function listPartitions(client: pg.ClientBase): Promise<Partition[]> {
  const { rows } = await client.query<{ name: string; bound: string }>(`
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'orders_history'::regclass`);
  return rows
    .map(({ name, bound }) => {
      const m = /FROM \('?(\d+)'?\) TO \('?(\d+)'?\)/.exec(bound);
      if (m === null) throw new Error(`history partition ${name} has a bound not of ours: ${bound}`);
      return { name, from: BigInt(m[1]!), to: BigInt(m[2]!) };
    })
    .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/**
 * Adds the partition of heights [from, to): created apart and attached,
 * which takes only a SHARE UPDATE EXCLUSIVE lock of orders_history, so that
 * reads go on meanwhile (CREATE TABLE ... PARTITION OF would lock them out
 * until the transaction ends); attaching creates its indexes, at no cost on
 * an empty table.
 */
export async function addPartition(client: pg.ClientBase, from: bigint, to: bigint): Promise<Partition> {
  const name = partitionName(from);
  await client.query(`
    CREATE TABLE ${name} (LIKE orders_history INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
    ALTER TABLE orders_history ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`);
  return { name, from, to };
}

/**
 * The partitions the writer knows of, kept in step with its session: it
 * adds those a group's history needs, in the group's transaction, and
 * forgets what it knew when a transaction fails (what it added is gone).
 */
export class WriterPartitions {
  private known: Partition[] | undefined;

  constructor(private readonly spanFor: (client: pg.ClientBase) => Promise<bigint>) {}

  /** Every partition, read once then kept up to date. */
  async list(client: pg.ClientBase): Promise<Partition[]> {
    this.known ??= await listPartitions(client);
    return this.known;
  }

  /** Makes sure heights up to `height` have a partition; within the caller's transaction. */
  async cover(client: pg.ClientBase, first: bigint, height: bigint): Promise<void> {
    const known = await this.list(client);
    let end = known.at(-1)?.to;
    if (end !== undefined && height < end) return;
    const span = await this.spanFor(client);
    // A store's first partition starts at 0: rows stored before blocks were kept have height 0.
    if (end === undefined) {
      known.push(await addPartition(client, 0n, first + span));
      end = first + span;
    }
    while (height >= end) {
      known.push(await addPartition(client, end, end + span));
      end += span;
    }
  }

  /** Forgets a dropped partition. */
  dropped(name: string): void {
    if (this.known !== undefined) this.known = this.known.filter((p) => p.name !== name);
  }

  /** After a failed transaction: what was added in it is gone, so read again next time. */
  forget(): void {
    this.known = undefined;
  }
}
