/**
 * Opaque page cursors. Every listing key is (int64 time or version, 32-byte hex id), so
 * a cursor is 45 bytes in base64url (60 characters, nothing to escape in a URL):
 *
 *   [0]      endpoint tag (also the format version)
 *   [1..8]   time, int64 big-endian
 *   [9..40]  id, 32 bytes
 *   [41..44] FNV-1a 32 of bytes 0..40
 *
 * Deterministic, so cursors survive restarts. The checksum is not a secret: it
 * only makes a garbled or truncated cursor fail loudly instead of silently
 * landing on a wrong page. Encoding runs once per row of every page, hence
 * the shared scratch buffer and no hashing library.
 */
import type { BundleKey } from '../domain/bundle.js';
import type { OrderKey, OrderVersionKey } from '../domain/order.js';
import { InternalError } from '../errors.js';

export interface CursorCodec<K> {
  encode(key: K): string;
  /** The key, or undefined for anything this codec did not produce. */
  decode(text: string): K | undefined;
}

/**
 * Tags 0x01 and 0x02 were cursors over microsecond-less times, with orders of
 * one time by id descending: they point at no place in today's listings, so
 * they are refused as any foreign cursor is.
 */
const ORDER_TAG = 0x03;
const BUNDLE_TAG = 0x04;
/** An order's versions: the version in the time's place. */
const VERSION_TAG = 0x05;
const REMOVED_BUNDLE_TAG = 0x06;

const TIME_AT = 1;
const ID_AT = 9;
const ID_BYTES = 32;
const CHECK_AT = ID_AT + ID_BYTES;
const CURSOR_BYTES = CHECK_AT + 4;
const CURSOR_CHARS = (CURSOR_BYTES / 3) * 4;
const CURSOR_SHAPE = new RegExp(`^[A-Za-z0-9_-]{${CURSOR_CHARS}}$`);

const scratch = Buffer.alloc(CURSOR_BYTES);

function checksum(bytes: Buffer): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < CHECK_AT; i++) {
    h ^= bytes[i] as number;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Throws for an id that is not 64 hex characters: the store promised such ids,
 * and a cursor that could not carry the id faithfully would land on a wrong page.
 */
function encodeKey(tag: number, time: bigint, id: string): string {
  scratch[0] = tag;
  scratch.writeBigInt64BE(time, TIME_AT);
  if (id.length !== ID_BYTES * 2 || scratch.write(id, ID_AT, ID_BYTES, 'hex') !== ID_BYTES) {
    throw new InternalError(`cannot encode a cursor for id ${JSON.stringify(id)}: not 64 hex characters`);
  }
  scratch.writeUInt32BE(checksum(scratch), CHECK_AT);
  return scratch.toString('base64url');
}

function decodeKey(tag: number, text: string): { time: bigint; id: string } | undefined {
  // Buffer's base64 decoder skips characters it does not know; check the alphabet first.
  if (!CURSOR_SHAPE.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== CURSOR_BYTES || bytes[0] !== tag) return undefined;
  if (bytes.readUInt32BE(CHECK_AT) !== checksum(bytes)) return undefined;
  return { time: bytes.readBigInt64BE(TIME_AT), id: bytes.toString('hex', ID_AT, CHECK_AT) };
}

export const orderCursors: CursorCodec<OrderKey> = {
  encode: (key) => encodeKey(ORDER_TAG, key.createdAt, key.id),
  decode(text) {
    const key = decodeKey(ORDER_TAG, text);
    return key && { createdAt: key.time, id: key.id };
  },
};

export const bundleCursors: CursorCodec<BundleKey> = {
  encode: (key) => encodeKey(BUNDLE_TAG, key.timestamp, key.signatureId),
  decode(text) {
    const key = decodeKey(BUNDLE_TAG, text);
    return key && { timestamp: key.time, signatureId: key.id };
  },
};

export const removedBundleCursors: CursorCodec<BundleKey> = {
  encode: (key) => encodeKey(REMOVED_BUNDLE_TAG, key.timestamp, key.signatureId),
  decode(text) {
    const key = decodeKey(REMOVED_BUNDLE_TAG, text);
    return key && { timestamp: key.time, signatureId: key.id };
  },
};

export const versionCursors: CursorCodec<OrderVersionKey> = {
  encode: (key) => encodeKey(VERSION_TAG, key.version, key.id),
  decode(text) {
    const key = decodeKey(VERSION_TAG, text);
    return key && { id: key.id, version: key.time };
  },
};
