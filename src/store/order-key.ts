/**
 * The tie-break of the order listing key. Orders are listed newest first as
 * (createdAt DESC, id ASC), as the original lists them, and oldest first as the
 * exact reverse, (createdAt ASC, id DESC). For one index to serve both
 * directions with plain row-value comparisons, the key holds the bitwise
 * complement of the id's 32 bytes: ascending key order is descending id order.
 * Backend-neutral: every backend keys its order indexes this way.
 */
import { CorruptInputError } from '../errors.js';

export const ORDER_ID_BYTES = 32;

/** The highest order id: at any one time, the first key in ascending key order. */
export const HIGHEST_ORDER_ID = 'f'.repeat(2 * ORDER_ID_BYTES);

const ORDER_ID = /^[0-9a-fA-F]{64}$/;

/** Writes the key of the id whose bytes are `idBytes` into `into` at `at`. */
export function writeOrderKey(idBytes: Uint8Array, into: Uint8Array, at: number): void {
  for (let i = 0; i < idBytes.length; i++) into[at + i] = ~idBytes[i]! & 0xff;
}

/** The key of the id whose bytes are `idBytes`. */
export function orderKeyOfBytes(idBytes: Uint8Array): Buffer {
  const key = Buffer.allocUnsafe(idBytes.length);
  writeOrderKey(idBytes, key, 0);
  return key;
}

/** The key of an order id (64 hex digits). */
export function orderKeyOf(id: string): Buffer {
  if (!ORDER_ID.test(id)) throw new CorruptInputError(`order id ${JSON.stringify(id)} is not 64 hex digits`);
  return orderKeyOfBytes(Buffer.from(id, 'hex'));
}
