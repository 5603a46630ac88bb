/**
 * Blocks -> the rows a backend writes, with no database at hand, for both
 * backends. It runs on whichever thread reads the source, so the writer only
 * binds and commits; everything in a PackedGroup survives postMessage, and its
 * history travels as a few transferable buffers rather than an object per row.
 */
import type { Block } from '../domain/block.js';
import { blockDigest } from '../domain/block-digest.js';
import { printedAddress } from '../domain/bundle.js';
import { isLive, type Order } from '../domain/order.js';
import { toMicros } from '../domain/time.js';
import { CorruptInputError, InternalError } from '../errors.js';
import { leadingIdBytes } from './history-message.js';
import { ORDER_ID_BYTES as ID_BYTES, writeOrderKey } from './order-key.js';
import type { BlockGroup, CommittedBlock } from './store.js';

export type SqlValue = string | number | bigint | Uint8Array | null;

const INT64_MAX = (1n << 63n) - 1n;

/** An unsigned 64-bit value as SQLite can hold it exactly: an INTEGER if it fits, else decimal text. */
export function u64(v: bigint): bigint | string {
  return v <= INT64_MAX ? v : v.toString();
}

/** Reads back what u64() stored. */
export function fromU64(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as string);
}

/** Writes the 32 bytes of an order id, the key orders are stored by. Ingestion refuses other ids. */
function writeOrderId(id: string, into: Buffer, at: number): void {
  // Buffer.write stops at the first character that is not hex.
  if (id.length !== 2 * ID_BYTES || into.write(id, at, ID_BYTES, 'hex') !== ID_BYTES) {
    throw new CorruptInputError(`order id ${JSON.stringify(id)} is not 64 hex digits`);
  }
}

/**
 * The columns of orders_current, in the order the writer binds them. Ids are
 * held as bytes and numbers only: the id's 32 bytes (printed, and looked up by
 * the writer), their complement (the key every listing index ends in, see
 * ./order-key.ts), and parties and markets as numbers (the `parties` and
 * `markets` tables). Times are whole microseconds, as the original keeps them.
 */
export const CURRENT_FIELDS = [
  'id_bytes', 'id_key', 'market_no', 'party_no', 'side', 'price', 'size', 'remaining', 'time_in_force', 'type',
  'created_at', 'status', 'expires_at', 'reference', 'reason', 'updated_at', 'version', 'batch_id',
  'pegged_reference', 'pegged_offset', 'lp_id', 'post_only', 'reduce_only', 'iceberg_peak_size',
  'iceberg_minimum_visible_size', 'iceberg_reserved_remaining', 'live', 'vega_time',
] as const;

export type CurrentField = (typeof CURRENT_FIELDS)[number];

/** The position of a column in CURRENT_FIELDS, and so in a row. */
export const at = (column: CurrentField): number => CURRENT_FIELDS.indexOf(column);

const ID_AT = at('id_bytes');
const KEY_AT = at('id_key');
export const MARKET_AT = at('market_no');
export const PARTY_AT = at('party_no');

/**
 * The values of CURRENT_FIELDS, except that the id columns are filled in once
 * the group is finished, and market_no and party_no hold the market and party
 * ids: only the writer, under its write lock, can number them.
 */
function currentRow(o: Order, vegaTime: bigint): SqlValue[] {
  return [
    null, null, o.marketId.toLowerCase(), o.partyId.toLowerCase(), o.side, o.price,
    u64(o.size), u64(o.remaining), o.timeInForce, o.type, toMicros(o.createdAt), o.status, toMicros(o.expiresAt),
    o.reference, o.reason ?? null, toMicros(o.updatedAt), u64(o.version), u64(o.batchId),
    o.peggedOrder?.reference ?? null, o.peggedOrder?.offset ?? null, o.liquidityProvisionId.toLowerCase(),
    o.postOnly ? 1 : 0, o.reduceOnly ? 1 : 0,
    o.icebergOrder ? u64(o.icebergOrder.peakSize) : null,
    o.icebergOrder ? u64(o.icebergOrder.minimumVisibleSize) : null,
    o.icebergOrder ? u64(o.icebergOrder.reservedRemaining) : null,
    isLive(o) ? 1 : 0, vegaTime,
  ];
}

/**
 * History rows: row i is (heights[i], seqs[i], ids[32i, 32i+32), versions[i],
 * markets[i], parties[i], messages[ends[i-1], ends[i])), of the order whose
 * state is latest[orders[i]] in the group. A block holds one row
 * per (order, version), seq numbering them in the block (see FillingGroup.add).
 * A message is stored without its leading ids (./history-message.ts);
 * markets[i] and parties[i] are positions in the group's `markets` and
 * `parties`, or -1 where the message is kept whole.
 */
export interface PackedHistory {
  heights: BigUint64Array;
  seqs: Uint32Array;
  ids: Uint8Array;
  versions: BigUint64Array;
  markets: Int32Array;
  parties: Int32Array;
  messages: Uint8Array;
  ends: Uint32Array;
  orders: Int32Array;
}

/** One transaction's worth of rows, from consecutive blocks. */
export interface PackedGroup {
  /**
   * Each block, in order: its height is checked against the stored last
   * block under the write lock; its hash and digest (../domain/block-digest.ts)
   * are kept to compare a block seen again.
   */
  blocks: { height: bigint; time: bigint; hash: string; digest: string }[];
  last: CommittedBlock;
  /** Each (order, version)'s last state in each block it changed in. */
  history: PackedHistory;
  /**
   * Each order's last state in the group, as currentRow() makes it, except
   * that its id bytes are a view of history.ids, its key a view of `keys`, and
   * its market and party are positions in `markets` and `parties`. Readers
   * never see the states in between.
   */
  latest: SqlValue[][];
  /** The id keys of the latest states, packed. */
  keys: Uint8Array;
  /**
   * The markets and parties of the latest states and history rows, each once. The writer numbers
   * each id once per group rather than once per row, and a few thousand ids
   * cross to its thread instead of two per row.
   */
  markets: string[];
  parties: string[];
  /** node_signatures rows: resource id, signature, kind, block time. */
  signatures: SqlValue[][];
  /** signer_added rows, in SIGNER_ADDED_FIELDS order. */
  added: SqlValue[][];
  /** signer_removed rows, in SIGNER_REMOVED_FIELDS order. */
  removed: SqlValue[][];
}

/** Times in whole microseconds and addresses as printed ("0x" + lower case), as the original keeps them. */
export const SIGNER_ADDED_FIELDS = [
  'signature_id', 'validator_id', 'timestamp', 'new_signer', 'submitter', 'nonce', 'epoch_seq', 'vega_time',
] as const;
export const SIGNER_REMOVED_FIELDS = [
  'signature_id', 'submitter', 'validator_id', 'timestamp', 'old_signer', 'nonce', 'epoch_seq', 'vega_time',
] as const;

/** Distinct ids in the order first seen, each with its position. */
class IdList {
  readonly ids: string[] = [];
  private readonly positions = new Map<string, number>();

  positionOf(id: string): number {
    let n = this.positions.get(id);
    if (n === undefined) {
      n = this.ids.push(id) - 1;
      this.positions.set(id, n);
    }
    return n;
  }
}

/** The buffers of a prepared group, to transfer rather than copy to another thread. */
export function transferables(p: PackedGroup): ArrayBuffer[] {
  return [
    p.history.heights.buffer, p.history.seqs.buffer, p.history.ids.buffer, p.history.versions.buffer,
    p.history.markets.buffer, p.history.parties.buffer, p.history.messages.buffer, p.history.ends.buffer,
    p.history.orders.buffer, p.keys.buffer,
  ] as ArrayBuffer[];
}

/**
 * The rows of a group, built block by block as blocks complete (the
 * BlockGroup of both writers): only each order's latest state stays an object.
 */
export class FillingGroup implements BlockGroup {
  private readonly blocks: PackedGroup['blocks'] = [];
  private last: CommittedBlock | undefined;
  private rows = 0;
  private heights = new BigUint64Array(4096);
  private seqs = new Uint32Array(4096);
  private versions = new BigUint64Array(4096);
  private ends = new Uint32Array(4096);
  private marketsAt = new Int32Array(4096);
  private partiesAt = new Int32Array(4096);
  private ordersAt = new Int32Array(4096);
  private ids = Buffer.allocUnsafeSlow(4096 * ID_BYTES);
  private messages = Buffer.allocUnsafeSlow(1 << 20);
  /**
   * Order id -> its row as of the last block that changed it. The row's
   * id_bytes holds the number of its history row until finish(): the history
   * buffers may still be replaced by larger ones.
   */
  private readonly current = new Map<string, SqlValue[]>();
  /** Order id -> its position in `current` (a Map keeps the order keys first came in), and so in the group's `latest`. */
  private readonly positions = new Map<string, number>();
  private readonly markets = new IdList();
  private readonly parties = new IdList();
  private readonly signatures: SqlValue[][] = [];
  private readonly added: SqlValue[][] = [];
  private readonly removed: SqlValue[][] = [];

  private finished = false;

  add(block: Block): void {
    if (this.finished) throw new InternalError('this group was already handed over to be written');
    const { orders, orderMessages } = block;
    if (orderMessages.length !== orders.length) {
      throw new InternalError(`block ${block.height} has ${orders.length} orders but ${orderMessages.length} order messages`);
    }
    const digest = blockDigest(block);
    // History keeps one row per (order, version) and block, the last update of
    // each, in the order of each key's LAST update: the original's batcher is an
    // ordered map whose re-set moves a key to the back (datanode/sqlstore/
    // batcher_map.go), and its versions and stream read those rows. Key -> the
    // index of its last state; a repeat is deleted first, to move it to the back.
    const byVersion = new Map<string, number>();
    // The current state is each order's last state in the block: id -> its index.
    const latest = new Map<string, number>();
    for (let i = 0; i < orders.length; i++) {
      const order = orders[i]!;
      const id = order.id.toLowerCase();
      const key = `${id}/${order.version}`;
      byVersion.delete(key);
      byVersion.set(key, i);
      latest.set(id, i);
    }
    let messageBytes = 0;
    for (const i of byVersion.values()) messageBytes += orderMessages[i]!.byteLength;
    this.reserve(byVersion.size, messageBytes);
    // Ids first: a bad one throws before anything the group holds has changed.
    let row = this.rows;
    for (const i of byVersion.values()) writeOrderId(orders[i]!.id.toLowerCase(), this.ids, row++ * ID_BYTES);
    const t = block.time;
    // Orders new to the group take the next positions, in the order `current` will add them (below).
    for (const id of latest.keys()) if (!this.positions.has(id)) this.positions.set(id, this.positions.size);
    // The history row of each state that has one: the current state takes its id bytes from it.
    const rowOf = new Int32Array(orders.length);
    row = this.rows;
    let end = row === 0 ? 0 : this.ends[row - 1]!;
    let seq = 0;
    for (const i of byVersion.values()) {
      const order = orders[i]!;
      const ids = { id: order.id.toLowerCase(), market: order.marketId.toLowerCase(), party: order.partyId.toLowerCase() };
      const message = orderMessages[i]!;
      const leading = leadingIdBytes(message, ids);
      this.heights[row] = block.height;
      this.seqs[row] = seq++;
      this.versions[row] = order.version;
      this.marketsAt[row] = leading === 0 ? -1 : this.markets.positionOf(ids.market);
      this.partiesAt[row] = leading === 0 ? -1 : this.parties.positionOf(ids.party);
      this.ordersAt[row] = this.positions.get(ids.id)!;
      this.messages.set(message.subarray(leading), end);
      end += message.byteLength - leading;
      this.ends[row] = end;
      rowOf[i] = row++;
    }
    // An order's last state is the last update of its (id, version): it has a row.
    for (const [id, i] of latest) {
      const state = currentRow(orders[i]!, t);
      state[ID_AT] = rowOf[i]!;
      this.current.set(id, state);
    }
    this.rows = row;
    for (const s of block.nodeSignatures) this.signatures.push([s.id.toLowerCase(), s.sig, s.kind, t]);
    for (const a of block.signersAdded) {
      this.added.push([
        a.signatureId.toLowerCase(), a.validatorId.toLowerCase(), toMicros(a.timestamp), printedAddress(a.newSigner),
        printedAddress(a.submitter), a.nonce, u64(a.epochSeq), t,
      ]);
    }
    for (const r of block.signersRemoved) {
      for (const s of r.signatureSubmitters) {
        this.removed.push([
          s.signatureId.toLowerCase(), printedAddress(s.submitter), r.validatorId.toLowerCase(), toMicros(r.timestamp),
          printedAddress(r.oldSigner), r.nonce, u64(r.epochSeq), t,
        ]);
      }
    }
    this.blocks.push({ height: block.height, time: block.time, hash: block.hash, digest });
    this.last = { height: block.height, time: block.time, chainId: block.chainId, hash: block.hash };
  }

  /** The group's rows; undefined if no block was added. A group is finished once. */
  finish(): PackedGroup | undefined {
    if (this.finished) throw new InternalError('this group was already handed over to be written');
    this.finished = true;
    if (this.last === undefined) return undefined;
    const rows = this.rows;
    const ids = this.ids;
    const latest = [...this.current.values()];
    const { markets, parties } = this;
    const keys = Buffer.allocUnsafeSlow(latest.length * ID_BYTES);
    latest.forEach((state, i) => {
      const row = state[ID_AT] as number;
      const id = ids.subarray(row * ID_BYTES, (row + 1) * ID_BYTES);
      state[ID_AT] = id;
      writeOrderKey(id, keys, i * ID_BYTES);
      state[KEY_AT] = keys.subarray(i * ID_BYTES, (i + 1) * ID_BYTES);
      state[MARKET_AT] = markets.positionOf(state[MARKET_AT] as string);
      state[PARTY_AT] = parties.positionOf(state[PARTY_AT] as string);
    });
    return {
      blocks: this.blocks,
      last: this.last,
      history: {
        heights: this.heights.subarray(0, rows),
        seqs: this.seqs.subarray(0, rows),
        ids: ids.subarray(0, rows * ID_BYTES),
        versions: this.versions.subarray(0, rows),
        markets: this.marketsAt.subarray(0, rows),
        parties: this.partiesAt.subarray(0, rows),
        messages: this.messages.subarray(0, rows === 0 ? 0 : this.ends[rows - 1]),
        ends: this.ends.subarray(0, rows),
        orders: this.ordersAt.subarray(0, rows),
      },
      latest,
      keys,
      markets: markets.ids,
      parties: parties.ids,
      signatures: this.signatures,
      added: this.added,
      removed: this.removed,
    };
  }

  /** Room for `rows` more history rows holding `messageBytes` more bytes of messages. */
  private reserve(rows: number, messageBytes: number): void {
    const needRows = this.rows + rows;
    if (needRows > this.heights.length) {
      const capacity = Math.max(needRows, 2 * this.heights.length);
      const rows = this.rows;
      this.heights = grown(this.heights, new BigUint64Array(capacity), rows);
      this.seqs = grown(this.seqs, new Uint32Array(capacity), rows);
      this.versions = grown(this.versions, new BigUint64Array(capacity), rows);
      this.ends = grown(this.ends, new Uint32Array(capacity), rows);
      this.marketsAt = grown(this.marketsAt, new Int32Array(capacity), rows);
      this.partiesAt = grown(this.partiesAt, new Int32Array(capacity), rows);
      this.ordersAt = grown(this.ordersAt, new Int32Array(capacity), rows);
      const ids = Buffer.allocUnsafeSlow(capacity * ID_BYTES);
      this.ids.copy(ids, 0, 0, this.rows * ID_BYTES);
      this.ids = ids;
    }
    const used = this.rows === 0 ? 0 : this.ends[this.rows - 1]!;
    if (used + messageBytes > this.messages.length) {
      const messages = Buffer.allocUnsafeSlow(Math.max(used + messageBytes, 2 * this.messages.length));
      this.messages.copy(messages, 0, 0, used);
      this.messages = messages;
    }
  }
}

/** `to`, holding the first `used` values of `from`. */
function grown<T extends BigUint64Array | Uint32Array | Int32Array>(from: T, to: T, used: number): T {
  (to as Int32Array).set((from as Int32Array).subarray(0, used));
  return to;
}
