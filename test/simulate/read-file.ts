import { readFileSync } from 'node:fs';
import { decodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { RecordSplitter } from '../../src/ingest/framing.js';

export interface DecodedRecord {
  seq: bigint;
  event: BusEvent;
}

/** Every record of a framed event file, decoded; fails on a partial tail. */
export function readEventFile(path: string): DecodedRecord[] {
  const splitter = new RecordSplitter();
  splitter.push(readFileSync(path));
  const out: DecodedRecord[] = [];
  for (let r = splitter.next(); r !== undefined; r = splitter.next()) {
    out.push({ seq: r.seq, event: decodeBusEvent(r.event) });
  }
  if (splitter.pending !== 0) throw new Error(`${splitter.pending} bytes of a partial record at the end of ${path}`);
  return out;
}
