/**
 * COPY's binary format, for the two kinds of rows that make most of a
 * group: order history (each state's protobuf message, taken as it is where
 * text would double it into hex here and decode it again on the server) and
 * the orders' current state. Layout: a signature and two zero words, then per
 * row a field count and each field as a byte length (-1: null) and its bytes
 * in the type's binary form, then -1.
 */
import type { PackedHistory } from '../rows.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, flags and an empty header extension, which open the data; a trailer (-1, 2 bytes) closes it. */
export const HEADER_BYTES = SIGNATURE.byteLength + 8;
const NBASE = 10_000n;
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);
/** A NUMERIC's header (8 bytes) and the five base-10000 digits of a 64-bit value at most. */
const NUMERIC_MAX_BYTES = 8 + 2 * 5;
/** numeric()'s digits, reused: an array per value was garbage per row. */
const DIGITS = [0, 0, 0, 0, 0];
const ID_BYTES = 32;
/** The fields of a history row: height, seq, id_bytes, version, market_no, party_no and message. */
const HISTORY_FIELDS = 7;
/** Per row at most: the field count, then each field's length and value, the message's bytes aside. */
const ROW_FIXED_BYTES = 2 + (4 + 4) + (4 + ID_BYTES) + 2 * (4 + NUMERIC_MAX_BYTES) + 2 * (4 + 4) + 4;

function header(out: Buffer): number {
  SIGNATURE.copy(out, 0);
  // Flags, then the length of the header extension: both 0.
  out.writeInt32BE(0, SIGNATURE.byteLength);
  return out.writeInt32BE(0, SIGNATURE.byteLength + 4);
}

/**
 * A NUMERIC field holding the unsigned integer `v` at `at`; returns the offset
 * after it. PostgreSQL's binary form of NUMERIC (numeric_send): the number of
 * base-10000 digits, the weight of the first, the sign and the display
 * scale, each 16 bits, then the digits, most significant first, without
 * trailing zero digits (as the server normalises them). Written by hand: pg
 * sends parameters as text, and a NUMERIC COPY field is this or nothing.
 */
function numeric(out: Buffer, v: number | bigint, at: number): number {
  // Least significant first, into one array for every value; in doubles while they are exact (heights and versions nearly always are).
  const digits = DIGITS;
  let length = 0;
  if (typeof v === 'number' || v <= MAX_EXACT) {
    for (let rest = Number(v); rest > 0; rest = Math.floor(rest / 10_000)) digits[length++] = rest % 10_000;
  } else {
    for (let rest = v; rest > 0n; rest /= NBASE) digits[length++] = Number(rest % NBASE);
  }
  const weight = length - 1;
  let first = 0;
  while (first < length && digits[first] === 0) first++;
  const ndigits = length - first;
  at = out.writeInt32BE(8 + 2 * ndigits, at);
  at = out.writeInt16BE(ndigits, at);
  at = out.writeInt16BE(ndigits === 0 ? 0 : weight, at);
  at = out.writeUInt16BE(0, at);
  at = out.writeInt16BE(0, at);
  for (let i = length - 1; i >= first; i--) at = out.writeUInt16BE(digits[i]!, at);
  return at;
}

/**
 * The rows (height NUMERIC, seq INTEGER, id_bytes BYTEA, version NUMERIC,
 * market_no INTEGER, party_no INTEGER, message BYTEA) of a group's history,
 * given the numbers of the group's markets and parties by position.
 */
export function historyBinaryCopy(history: PackedHistory, marketNos: readonly number[], partyNos: readonly number[]): Buffer {
  const { heights, seqs, ids, versions, markets, parties, messages, ends } = history;
  const rows = seqs.length;
  const messageBytes = rows === 0 ? 0 : ends[rows - 1]!;
  const out = Buffer.allocUnsafeSlow(HEADER_BYTES + rows * ROW_FIXED_BYTES + messageBytes + 2);
  let at = header(out);
  const idBytes = Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const messageBuffer = Buffer.from(messages.buffer, messages.byteOffset, messages.byteLength);
  /** An INTEGER field at `from`, NULL for no number; returns the offset after it. */
  const integer = (no: number | undefined, from: number) =>
    no === undefined ? out.writeInt32BE(-1, from) : out.writeInt32BE(no, out.writeInt32BE(4, from));
  let start = 0;
  for (let i = 0; i < rows; i++) {
    const end = ends[i]!;
    at = out.writeInt16BE(HISTORY_FIELDS, at);
    at = numeric(out, heights[i]!, at);
    at = integer(seqs[i]!, at);
    at = out.writeInt32BE(ID_BYTES, at);
    at += idBytes.copy(out, at, i * ID_BYTES, (i + 1) * ID_BYTES);
    at = numeric(out, versions[i]!, at);
    at = integer(marketNos[markets[i]!], at);
    at = integer(partyNos[parties[i]!], at);
    at = out.writeInt32BE(end - start, at);
    at += messageBuffer.copy(out, at, start, end);
    start = end;
  }
  out.writeInt16BE(-1, at);
  return out.subarray(0, at + 2);
}

/**
 * Rows of any shape, field by field; the caller writes each field in the
 * binary form of its column's type. Written straight into one growing buffer:
 * a string per field or per line made most of a group's garbage.
 */
export class BinaryCopyWriter {
  private out: Buffer;
  private view: DataView;
  private at: number;

  /** `bytes`: what the rows are expected to take (the last batch's size), so that the buffer is not grown and copied as they come. */
  constructor(bytes = 1 << 20) {
    this.out = Buffer.allocUnsafeSlow(Math.max(bytes, HEADER_BYTES + 2));
    this.view = new DataView(this.out.buffer);
    this.at = header(this.out);
  }

  row(fields: number): void {
    this.reserve(2);
    this.view.setInt16(this.at, fields);
    this.at += 2;
  }

  null(): void {
    this.reserve(4);
    this.view.setInt32(this.at, -1);
    this.at += 4;
  }

  int2(v: number): void {
    this.reserve(6);
    this.view.setInt32(this.at, 2);
    this.view.setInt16(this.at + 4, v);
    this.at += 6;
  }

  int4(v: number): void {
    this.reserve(8);
    this.view.setInt32(this.at, 4);
    this.view.setInt32(this.at + 4, v);
    this.at += 8;
  }

  int8(v: number | bigint): void {
    this.reserve(12);
    this.view.setInt32(this.at, 8);
    if (typeof v === 'bigint') {
      this.view.setBigInt64(this.at + 4, v);
    } else {
      // A safe integer, in two words without a bigint: the high one floored, so that a negative value is its two's complement.
      this.view.setInt32(this.at + 4, Math.floor(v / 2 ** 32));
      this.view.setUint32(this.at + 8, v >>> 0);
    }
    this.at += 12;
  }

  /** An unsigned integer as NUMERIC. */
  numeric(v: number | bigint): void {
    this.reserve(4 + NUMERIC_MAX_BYTES);
    this.at = numeric(this.out, v, this.at);
  }

  bytea(b: Uint8Array): void {
    this.reserve(4 + b.byteLength);
    this.view.setInt32(this.at, b.byteLength);
    this.out.set(b, this.at + 4);
    this.at += 4 + b.byteLength;
  }

  /** Text in UTF-8 (the client encoding of our sessions). */
  text(s: string): void {
    // At most 3 bytes per UTF-16 unit (a surrogate pair is 2 units and 4 bytes).
    this.reserve(4 + 3 * s.length);
    const bytes = this.out.write(s, this.at + 4, 'utf8');
    this.view.setInt32(this.at, bytes);
    this.at += 4 + bytes;
  }

  /** The rows written, with the trailer; the writer is not used after. */
  finish(): Buffer {
    this.reserve(2);
    this.view.setInt16(this.at, -1);
    return this.out.subarray(0, this.at + 2);
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.out.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.out.length, this.at + bytes));
    this.out.copy(grown, 0, 0, this.at);
    this.out = grown;
    this.view = new DataView(grown.buffer);
  }
}
