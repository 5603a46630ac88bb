import { readFileSync } from 'node:fs';
import { decodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { RecordSplitter } from '../../src/ingest/framing.js';
import { BusEventMessage } from '../../src/wire/order-message.js';

export interface DecodedRecord {
  seq: bigint;
  /** Byte offset of the record in the file. */
  offset: number;
  event: BusEvent;
  /** BusEvent field 6, read from the bytes: decoding leaves it out of `event`. */
  txHash: string;
}

export interface EventFileContents {
  records: DecodedRecord[];
  /** Bytes at the end that do not form a whole record (a cut file's tail). */
  partial: number;
}

/** Every whole record of a framed event file, decoded, and how many bytes of a partial one follow. */
export function readEventFileTail(path: string): EventFileContents {
  const splitter = new RecordSplitter();
  splitter.push(readFileSync(path));
  const records: DecodedRecord[] = [];
  for (let r = splitter.next(); r !== undefined; r = splitter.next()) {
    const { txHash } = BusEventMessage.decode(r.event) as unknown as { txHash: string };
    records.push({ seq: r.seq, offset: r.offset, event: decodeBusEvent(r.event), txHash });
  }
  return { records, partial: splitter.pending };
}

/** Every record of a framed event file, decoded; fails on a partial tail. */
export function readEventFile(path: string): DecodedRecord[] {
  const { records, partial } = readEventFileTail(path);
  if (partial !== 0) throw new Error(`${partial} bytes of a partial record at the end of ${path}`);
  return records;
}
