/**
 * The model's own reading of an event file (docs/compatibility.md, sections
 * 9.1 and 9.6): gunzip when it starts as gzip does, split the records
 * (uint32 size = 8 + length, uint64 sequence number, the BusEvent), decode
 * each with the model's protobuf reader, and gather BeginBlock .. EndBlock
 * into blocks. None of src/ingest runs here: the model is to answer from
 * events it read itself.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { decodeEvent, type ModelEvent } from './model-protobuf.js';
import type { ModelBlock } from './model-types.js';

/** The BusEvent bytes of every whole record; a record cut off at the end is left out, as a reader must. */
export function eventRecords(file: Buffer): Buffer[] {
  const bytes = file[0] === 0x1f && file[1] === 0x8b ? gunzipSync(file) : file;
  const records: Buffer[] = [];
  let previous: bigint | undefined;
  for (let at = 0; at + 12 <= bytes.length;) {
    const size = bytes.readUInt32BE(at);
    const seq = bytes.readBigUInt64BE(at + 4);
    if (size < 8) throw new Error(`record at byte ${at}: size ${size} is less than its sequence number`);
    if (previous !== undefined && seq !== previous + 1n) throw new Error(`record at byte ${at}: sequence number ${seq} after ${previous}`);
    if (at + 4 + size > bytes.length) break;
    records.push(bytes.subarray(at + 12, at + 4 + size));
    previous = seq;
    at += 4 + size;
  }
  return records;
}

/**
 * Every whole block of the events, in the order they come (a height that
 * comes twice is here twice: replay keeps the first). Events before the
 * first BeginBlock belong to no block and are left out; so is a block the
 * events end inside.
 */
export function assembleBlocks(events: Iterable<ModelEvent>): ModelBlock[] {
  const blocks: ModelBlock[] = [];
  let open: ModelBlock | undefined;
  for (const e of events) {
    if (e.kind === 'beginBlock') {
      if (open !== undefined) throw new Error(`BeginBlock ${e.height} while block ${open.height} is open`);
      open = {
        height: e.height, time: e.time, hash: e.hash, chainId: e.chainId, orders: [], nodeSignatures: [], signersAdded: [], signersRemoved: [],
      };
      continue;
    }
    if (open === undefined) continue;
    if (e.kind === 'endBlock') {
      if (e.height !== open.height) throw new Error(`EndBlock ${e.height} closes block ${open.height}`);
      blocks.push(open);
      open = undefined;
    } else if (e.kind === 'order') open.orders.push(e.order);
    else if (e.kind === 'nodeSignature') open.nodeSignatures.push(e.nodeSignature);
    else if (e.kind === 'signerAdded') open.signersAdded.push(e.signerAdded);
    else if (e.kind === 'signerRemoved') open.signersRemoved.push(e.signerRemoved);
  }
  return blocks;
}

/** The whole blocks of the event file at `path` (plain or gzip), as the model reads them. */
export function readModelBlocks(path: string): ModelBlock[] {
  return assembleBlocks(eventRecords(readFileSync(path)).map(decodeEvent));
}
