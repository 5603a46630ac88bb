/**
 * Order history in COPY's binary format. History rows are most of a group's
 * bytes (each state's protobuf message); binary takes them as they are, where
 * text would double them into hex on this thread and decode them again on the
 * server's. Layout: a signature and two zero words, then per row a field
 * count and each field as a byte length and its bytes, then -1.
 */
import type { PackedHistory } from '../rows.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER_BYTES = SIGNATURE.byteLength + 8;
const ID_BYTES = 32;
/** Per row: field count, then (length, value) of vega_time, id_bytes and message. */
const ROW_FIXED_BYTES = 2 + (4 + 8) + (4 + ID_BYTES) + 4;

/** The rows (vega_time BIGINT, id_bytes BYTEA, message BYTEA) of a group's history. */
export function historyBinaryCopy({ times, ids, messages, ends }: PackedHistory): Buffer {
  const rows = times.length;
  const messageBytes = rows === 0 ? 0 : ends[rows - 1]!;
  const out = Buffer.allocUnsafeSlow(HEADER_BYTES + rows * ROW_FIXED_BYTES + messageBytes + 2);
  SIGNATURE.copy(out, 0);
  let at = SIGNATURE.byteLength;
  at = out.writeInt32BE(0, at); // flags
  at = out.writeInt32BE(0, at); // header extension length
  const idBytes = Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);
  const messageBuffer = Buffer.from(messages.buffer, messages.byteOffset, messages.byteLength);
  let start = 0;
  for (let i = 0; i < rows; i++) {
    const end = ends[i]!;
    at = out.writeInt16BE(3, at);
    at = out.writeInt32BE(8, at);
    at = out.writeBigInt64BE(times[i]!, at);
    at = out.writeInt32BE(ID_BYTES, at);
    at += idBytes.copy(out, at, i * ID_BYTES, (i + 1) * ID_BYTES);
    at = out.writeInt32BE(end - start, at);
    at += messageBuffer.copy(out, at, start, end);
    start = end;
  }
  out.writeInt16BE(-1, at);
  return out;
}
