/**
 * Blocks -> the rows the SQLite writer binds, with no database at hand. It
 * runs on whichever thread reads the source, so the writer thread only binds
 * and commits; everything in a PreparedGroup survives postMessage, and its
 * history travels as a few transferable buffers rather than an object per row.
 */
import type { Block } from '../domain/block.js';
import { isLive, type Order } from '../domain/order.js';
import type { CommittedBlock } from './store.js';

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

const ID_BYTES = 32;

/**
 * Writes the 32 bytes of an order id, the key orders are stored and listed by
 * (byte order is the order of the lowercase hex). Ingestion refuses other ids.
 */
function writeOrderId(id: string, into: Buffer, at: number): void {
  // Buffer.write stops at the first character that is not hex.
  if (id.length !== 2 * ID_BYTES || into.write(id, at, ID_BYTES, 'hex') !== ID_BYTES) {
    throw new Error(`order id ${JSON.stringify(id)} is not 64 hex digits`);
  }
}

/** The id bytes of an order id; the empty id, which date ranges bound with, is the key before every id. */
export function orderIdBytes(id: string): Buffer {
  const bytes = Buffer.alloc(id === '' ? 0 : ID_BYTES);
  if (id !== '') writeOrderId(id, bytes, 0);
  return bytes;
}

export const ORDER_FIELDS = [
  'id', 'market_id', 'party_id', 'side', 'price', 'size', 'remaining', 'time_in_force', 'type',
  'created_at', 'status', 'expires_at', 'reference', 'reason', 'updated_at', 'version', 'batch_id',
  'pegged_reference', 'pegged_offset', 'lp_id', 'post_only', 'reduce_only', 'iceberg_peak_size',
  'iceberg_minimum_visible_size', 'iceberg_reserved_remaining', 'live', 'vega_time',
] as const;

/** The values of ORDER_FIELDS, in that order. */
function orderRow(o: Order, vegaTime: bigint): SqlValue[] {
  return [
    o.id.toLowerCase(), o.marketId.toLowerCase(), o.partyId.toLowerCase(), o.side, o.price,
    u64(o.size), u64(o.remaining), o.timeInForce, o.type, o.createdAt, o.status, o.expiresAt,
    o.reference, o.reason ?? null, o.updatedAt, u64(o.version), u64(o.batchId),
    o.peggedOrder?.reference ?? null, o.peggedOrder?.offset ?? null, o.liquidityProvisionId,
    o.postOnly ? 1 : 0, o.reduceOnly ? 1 : 0,
    o.icebergOrder ? u64(o.icebergOrder.peakSize) : null,
    o.icebergOrder ? u64(o.icebergOrder.minimumVisibleSize) : null,
    o.icebergOrder ? u64(o.icebergOrder.reservedRemaining) : null,
    isLive(o) ? 1 : 0, vegaTime,
  ];
}

/** History rows: row i is (times[i], ids[32i, 32i+32), messages[ends[i-1], ends[i])). */
export interface PackedHistory {
  times: BigInt64Array;
  ids: Uint8Array;
  messages: Uint8Array;
  ends: Uint32Array;
}

/** One transaction's worth of rows, from consecutive blocks. */
export interface PreparedGroup {
  /** Of each block, in order: checked against the stored last block under the write lock. */
  heights: bigint[];
  last: CommittedBlock;
  /** Each order's last state in each block it changed in. */
  history: PackedHistory;
  /** Each order's last state in the group: ORDER_FIELDS values. Readers never see the states in between. */
  latest: SqlValue[][];
  /** node_signatures rows: resource id, signature, kind, block time. */
  signatures: SqlValue[][];
  /** signer_added rows, in SIGNER_ADDED_FIELDS order. */
  added: SqlValue[][];
  /** signer_removed rows, in SIGNER_REMOVED_FIELDS order. */
  removed: SqlValue[][];
}

export const SIGNER_ADDED_FIELDS = [
  'signature_id', 'validator_id', 'timestamp', 'new_signer', 'submitter', 'submitter_lower', 'nonce', 'epoch_seq', 'vega_time',
] as const;
export const SIGNER_REMOVED_FIELDS = [
  'signature_id', 'submitter', 'validator_id', 'timestamp', 'old_signer', 'nonce', 'epoch_seq', 'vega_time',
] as const;

/** The buffers of a prepared group, to transfer rather than copy to another thread. */
export function transferables(p: PreparedGroup): ArrayBuffer[] {
  return [p.history.times.buffer, p.history.ids.buffer, p.history.messages.buffer, p.history.ends.buffer] as ArrayBuffer[];
}

export function prepareGroup(blocks: readonly Block[]): PreparedGroup | undefined {
  const lastBlock = blocks.at(-1);
  if (lastBlock === undefined) return undefined;
  // Within a block only the last state of an order counts: per block, id -> index of that state.
  const perBlock = blocks.map((block) => {
    const { orders, orderMessages } = block;
    if (orderMessages.length !== orders.length) {
      throw new Error(`block ${block.height} has ${orders.length} orders but ${orderMessages.length} order messages`);
    }
    const latest = new Map<string, number>();
    for (let i = 0; i < orders.length; i++) latest.set(orders[i]!.id.toLowerCase(), i);
    return latest;
  });
  let rows = 0;
  let messageBytes = 0;
  blocks.forEach((block, b) => {
    for (const i of perBlock[b]!.values()) messageBytes += block.orderMessages[i]!.byteLength;
    rows += perBlock[b]!.size;
  });
  const history: PackedHistory = {
    times: new BigInt64Array(rows),
    ids: Buffer.allocUnsafeSlow(rows * ID_BYTES),
    messages: Buffer.allocUnsafeSlow(messageBytes),
    ends: new Uint32Array(rows),
  };
  const ids = history.ids as Buffer;
  // Order id -> its row as of the last block of the group that changed it.
  const current = new Map<string, SqlValue[]>();
  const group: Omit<PreparedGroup, 'history' | 'latest'> = {
    heights: blocks.map((b) => b.height),
    last: { height: lastBlock.height, time: lastBlock.time, chainId: lastBlock.chainId },
    signatures: [], added: [], removed: [],
  };
  let row = 0;
  let end = 0;
  blocks.forEach((block, b) => {
    const t = block.time;
    for (const [id, i] of perBlock[b]!) {
      history.times[row] = t;
      writeOrderId(id, ids, row * ID_BYTES);
      const message = block.orderMessages[i]!;
      history.messages.set(message, end);
      end += message.byteLength;
      history.ends[row++] = end;
      current.set(id, orderRow(block.orders[i]!, t));
    }
    for (const s of block.nodeSignatures) group.signatures.push([s.id.toLowerCase(), s.sig, s.kind, t]);
    for (const a of block.signersAdded) {
      group.added.push([
        a.signatureId.toLowerCase(), a.validatorId.toLowerCase(), a.timestamp, a.newSigner, a.submitter,
        a.submitter.toLowerCase(), a.nonce, u64(a.epochSeq), t,
      ]);
    }
    for (const r of block.signersRemoved) {
      for (const s of r.signatureSubmitters) {
        group.removed.push([
          s.signatureId.toLowerCase(), s.submitter, r.validatorId.toLowerCase(), r.timestamp, r.oldSigner, r.nonce,
          u64(r.epochSeq), t,
        ]);
      }
    }
  });
  return { ...group, history, latest: [...current.values()] };
}
