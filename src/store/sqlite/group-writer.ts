/**
 * Writes one group of blocks into SQLite, inside the caller's transaction
 * machinery: history rows, the current state of each order with the cheapest
 * exact statement, the planner's counts, bundles, and the checkpoint.
 */
import type Database from 'better-sqlite3';
import {
  CURRENT_FIELDS, MARKET_AT, PARTY_AT, SIGNER_ADDED_FIELDS, SIGNER_REMOVED_FIELDS, at,
  u64, type CurrentField, type PackedHistory, type PackedGroup, type SqlValue,
} from '../rows.js';
import type { CommittedBlock } from '../store.js';
import { BlockOrderError } from '../../errors.js';
import { ORDER_NO_OF_ID, OrderIdLevels } from './order-ids.js';

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');


function upsertSql(table: string, columns: readonly string[], conflict: string[]): string {
  const updates = columns.filter((c) => !conflict.includes(c)).map((c) => `${c} = excluded.${c}`);
  return (
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders(columns.length)}) ` +
    `ON CONFLICT (${conflict.join(', ')}) DO UPDATE SET ${updates.join(', ')}`
  );
}

/**
 * Indexed columns an order keeps for life (market, party, creation time,
 * reference, type), and those its events change (status, time in force,
 * liveness). SQLite rewrites an index entry whenever an UPDATE assigns one of
 * its columns, even to the same value; most events only fill or amend an order,
 * so the writer assigns indexed columns only when they really changed.
 */
const LIFELONG: readonly CurrentField[] = ['market_no', 'party_no', 'created_at', 'reference', 'type'];
const CHANGING: readonly CurrentField[] = ['status', 'time_in_force', 'live'];
const INDEXED: readonly CurrentField[] = [...LIFELONG, ...CHANGING];

/** The columns order_counts counts, by the dimension name the planner uses. */
const COUNTED = [['status', 'status'], ['type', 'type'], ['timeInForce', 'time_in_force'], ['live', 'live']] as const;
const COUNTED_AT = COUNTED.map(([, column]) => at(column));
const COUNTED_STORED_AT = COUNTED.map(([, column]) => INDEXED.indexOf(column));

/**
 * The columns an order is found by: derived from its id, never assigned by an
 * update. id_key ends every listing index, so assigning it, even to the same
 * value, would rewrite ten index entries per update.
 */
const IDENTITY: readonly CurrentField[] = ['id_bytes', 'id_key'];
const ID_BYTES_AT = at('id_bytes');

/** A prepared UPDATE of some columns of the order numbered `no`, bound from a full order row. */
class PartialUpdate {
  private readonly statement: Database.Statement;
  private readonly positions: number[];
  constructor(db: Database.Database, columns: readonly CurrentField[]) {
    const set = columns.filter((c) => !IDENTITY.includes(c));
    this.statement = db.prepare(`UPDATE orders_current SET ${set.map((c) => `${c} = ?`).join(', ')} WHERE no = ?`);
    this.positions = set.map(at);
  }
  run(row: SqlValue[], no: bigint): void {
    const values = this.positions.map((i) => row[i]);
    values.push(no);
    this.statement.run(values);
  }
}

/** Is the stored value (integers come back as bigint) the one about to be written? */
function same(stored: unknown, next: SqlValue): boolean {
  return typeof next === 'number' ? stored === BigInt(next) : stored === next;
}

/**
 * Numbers for party or market ids, which indexes hold instead of 64 hex
 * characters. A number, once committed, never changes, so it is cached; the
 * cache is dropped when a transaction that may have added numbers fails, and
 * when it grows large.
 */
class InternedIds {
  private static readonly CACHE_LIMIT = 1 << 17;
  private readonly cache = new Map<string, number>();
  private readonly select: Database.Statement;
  private readonly insert: Database.Statement;

  constructor(db: Database.Database, table: 'parties' | 'markets') {
    this.select = db.prepare(`SELECT no FROM ${table} WHERE id = ?`).pluck(true);
    this.insert = db.prepare(`INSERT INTO ${table} (id) VALUES (?)`);
  }

  no(id: string): number {
    let n = this.cache.get(id);
    if (n !== undefined) return n;
    const stored = this.select.get(id) as bigint | undefined;
    n = Number(stored ?? this.insert.run(id).lastInsertRowid);
    if (this.cache.size >= InternedIds.CACHE_LIMIT) this.cache.clear();
    this.cache.set(id, n);
    return n;
  }

  forget(): void {
    this.cache.clear();
  }
}

/**
 * History rows bound per INSERT: a statement's fixed cost, paid per row, was
 * a third of a history row's cost.
 */
const HISTORY_ROWS_PER_INSERT = 64;
const HISTORY_FIELDS = ['height', 'seq', 'order_no', 'id_bytes', 'version', 'market_no', 'party_no', 'message'] as const;
const HISTORY_COLUMNS = HISTORY_FIELDS.length;

export class GroupWriter {
  private readonly selectIndexed: Database.Statement;
  private readonly insertCurrent: Database.Statement;
  private readonly updateUnindexed: PartialUpdate;
  private readonly updateChanging: PartialUpdate;
  private readonly updateAll: PartialUpdate;
  private readonly insertHistory: Database.Statement;
  private readonly insertHistoryRows: Database.Statement;
  private readonly parties: InternedIds;
  private readonly markets: InternedIds;
  private readonly addCount: Database.Statement;
  private readonly insertSignature: Database.Statement;
  private readonly upsertAdded: Database.Statement;
  private readonly upsertRemoved: Database.Statement;
  private readonly setLastBlock: Database.Statement;
  private readonly insertBlock: Database.Statement;
  private readonly orderIds: OrderIdLevels;
  readonly write: (group: PackedGroup) => void;

  constructor(db: Database.Database, private readonly lastBlock: () => CommittedBlock | undefined) {
    // The order's number last: history rows name their order by it (./order-numbers.ts).
    this.selectIndexed = db.prepare(`SELECT ${INDEXED.join(', ')}, no FROM orders_current WHERE no = ${ORDER_NO_OF_ID}`).raw(true);
    this.insertCurrent = db.prepare(
      `INSERT INTO orders_current (${CURRENT_FIELDS.join(', ')}) VALUES (${placeholders(CURRENT_FIELDS.length)})`,
    );
    const unindexed = CURRENT_FIELDS.filter((c) => !INDEXED.includes(c));
    this.updateUnindexed = new PartialUpdate(db, unindexed);
    this.updateChanging = new PartialUpdate(db, [...unindexed, ...CHANGING]);
    this.updateAll = new PartialUpdate(db, CURRENT_FIELDS);
    // Plain inserts: a row's key is its block's height, which was just checked to be new.
    const history = (rows: number) =>
      db.prepare(
        `INSERT INTO orders_history (${HISTORY_FIELDS.join(', ')}) VALUES ${Array(rows).fill(`(${placeholders(HISTORY_FIELDS.length)})`).join(', ')}`,
      );
    this.insertHistory = history(1);
    this.insertHistoryRows = history(HISTORY_ROWS_PER_INSERT);
    this.parties = new InternedIds(db, 'parties');
    this.markets = new InternedIds(db, 'markets');
    this.addCount = db.prepare(
      'INSERT INTO order_counts (dimension, value, n) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n',
    );
    // Same resource, same bytes: the same signature seen again.
    this.insertSignature = db.prepare(
      'INSERT INTO node_signatures (resource_id, sig, kind, vega_time) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.upsertAdded = db.prepare(upsertSql('signer_added', SIGNER_ADDED_FIELDS, ['signature_id']));
    this.upsertRemoved = db.prepare(upsertSql('signer_removed', SIGNER_REMOVED_FIELDS, ['signature_id']));
    this.setLastBlock = db.prepare(
      'INSERT INTO last_block (only_row, height, time, chain_id, hash) VALUES (1, ?, ?, ?, ?) ' +
        'ON CONFLICT (only_row) DO UPDATE SET ' +
        'height = excluded.height, time = excluded.time, chain_id = excluded.chain_id, hash = excluded.hash',
    );
    this.insertBlock = db.prepare('INSERT INTO blocks (height, hash, time, digest) VALUES (?, ?, ?, ?)');
    this.orderIds = new OrderIdLevels(db);
    // IMMEDIATE takes the write lock up front, so a concurrent writer waits instead of failing mid-block.
    const transaction = db.transaction((group: PackedGroup) => this.writeGroup(group)).immediate;
    this.write = (group) => {
      try {
        transaction(group);
      } catch (e) {
        // Numbers handed out in the rolled-back transaction no longer exist.
        this.parties.forget();
        this.markets.forget();
        this.orderIds.forget();
        throw e;
      }
    };
  }

  /**
   * One transaction's blocks. History gets the last state of each (order,
   * version) in each block; the current state only the last state in the
   * group. An order placed and filled within a group so never enters (and
   * leaves) the live indexes, and each index entry an order's changes move is
   * moved once per group. Current states are written first: each history
   * row names its order by the number the order's state has.
   */
  private writeGroup(group: PackedGroup): void {
    let last = this.lastBlock()?.height;
    for (const { height, time, hash, digest } of group.blocks) {
      // Checked under the write lock: no other writer can slip a block in between.
      if (last !== undefined && height <= last) {
        throw new BlockOrderError(`block ${height} is not newer than the last stored block ${last}`);
      }
      last = height;
      this.insertBlock.run(u64(height), hash, time, digest);
    }
    const marketNos = group.markets.map((id) => this.markets.no(id));
    const partyNos = group.parties.map((id) => this.parties.no(id));
    // Per COUNTED dimension: value -> change in its number of orders.
    const counts = COUNTED.map(() => new Map<number, number>());
    const orderNos = group.latest.map((row) => {
      row[MARKET_AT] = marketNos[row[MARKET_AT] as number]!;
      row[PARTY_AT] = partyNos[row[PARTY_AT] as number]!;
      return this.writeCurrent(row, counts);
    });
    this.writeHistory(group.history, marketNos, partyNos, orderNos);
    for (const row of group.signatures) this.insertSignature.run(row);
    for (const row of group.added) this.upsertAdded.run(row);
    for (const row of group.removed) this.upsertRemoved.run(row);
    counts.forEach((deltas, d) => {
      for (const [value, delta] of deltas) if (delta !== 0) this.addCount.run(COUNTED[d]![0], value, delta);
    });
    this.setLastBlock.run(u64(group.last.height), group.last.time, group.last.chainId, group.last.hash);
    this.orderIds.settle();
  }

  private writeHistory(
    history: PackedHistory, marketNos: readonly number[], partyNos: readonly number[], orderNos: readonly (number | bigint)[],
  ): void {
    const { heights, seqs, ids, versions, markets, parties, messages, ends, orders } = history;
    const row = (i: number, into: SqlValue[], offset: number) => {
      into[offset] = u64(heights[i]!);
      into[offset + 1] = seqs[i]!;
      into[offset + 2] = orderNos[orders[i]!]!;
      into[offset + 3] = ids.subarray(32 * i, 32 * i + 32);
      into[offset + 4] = u64(versions[i]!);
      into[offset + 5] = marketNos[markets[i]!] ?? null;
      into[offset + 6] = partyNos[parties[i]!] ?? null;
      into[offset + 7] = messages.subarray(i === 0 ? 0 : ends[i - 1], ends[i]);
    };
    const many: SqlValue[] = new Array(HISTORY_COLUMNS * HISTORY_ROWS_PER_INSERT);
    let i = 0;
    for (; i + HISTORY_ROWS_PER_INSERT <= seqs.length; i += HISTORY_ROWS_PER_INSERT) {
      for (let j = 0; j < HISTORY_ROWS_PER_INSERT; j++) row(i + j, many, HISTORY_COLUMNS * j);
      this.insertHistoryRows.run(many);
    }
    const one: SqlValue[] = new Array(HISTORY_COLUMNS);
    for (; i < seqs.length; i++) {
      row(i, one, 0);
      this.insertHistory.run(one);
    }
  }

  /**
   * Writes the current state (a row of CURRENT_FIELDS) with the cheapest
   * statement that is still exact; returns the order's number.
   */
  private writeCurrent(row: SqlValue[], counts: Map<number, number>[]): number | bigint {
    const stored = this.selectIndexed.get(row[ID_BYTES_AT]) as unknown[] | undefined;
    const count = (values: readonly unknown[], positions: readonly number[], delta: number) => {
      counts.forEach((deltas, d) => {
        const value = Number(values[positions[d]!]);
        deltas.set(value, (deltas.get(value) ?? 0) + delta);
      });
    };
    if (stored === undefined) {
      count(row, COUNTED_AT, 1);
      const no = this.insertCurrent.run(row).lastInsertRowid;
      this.orderIds.add(row[ID_BYTES_AT] as Uint8Array, no);
      return no;
    }
    const no = stored[INDEXED.length] as bigint;
    const unchanged = (c: CurrentField) => same(stored[INDEXED.indexOf(c)], row[at(c)]!);
    if (INDEXED.every(unchanged)) {
      this.updateUnindexed.run(row, no);
      return no;
    }
    count(stored, COUNTED_STORED_AT, -1);
    count(row, COUNTED_AT, 1);
    if (LIFELONG.every(unchanged)) this.updateChanging.run(row, no);
    else this.updateAll.run(row, no);
    return no;
  }
}

