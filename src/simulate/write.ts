/**
 * Writes a simulated chain as the core's framed event file, whole or, as a
 * file whose writer was cut off, ending inside a block.
 */
import { open } from 'node:fs/promises';
import { encodeBusEvent } from '../ingest/codec.js';
import { RECORD_HEADER_BYTES, encodeRecord } from '../ingest/framing.js';
import { Random } from './random.js';
import { simulateEvents, type SimulateOptions, type SimulationSummary } from './simulate.js';

/** Records are gathered into chunks of about this size, so the file sees few large writes. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** The random stream that picks where a cut file ends (the simulation's own are 1, 2, 3 and 5). */
const CUT_STREAM = 4;

/**
 * How a cut file ends, inside one more block after the whole ones: in the
 * middle of one of its records (its header or its event), or on a record
 * boundary before its EndBlock. Either way its BeginBlock is whole.
 */
export type CutKind = 'record' | 'boundary';

export interface WriteOptions extends SimulateOptions {
  /** End the file inside one more, incomplete block (default: the file ends with its last whole block). */
  cut?: CutKind;
  /** Called as each whole block is written, with its height (progress). */
  onBlock?: (height: bigint) => void;
}

/** Where a cut file ends. */
export interface FileCut {
  how: CutKind;
  /**
   * The last whole block, the last one a reader may store: its height, and
   * the byte offset just past its EndBlock record, where the incomplete block
   * starts. Absent when the file holds no whole block (`blocks: 0`).
   */
  lastWholeBlock?: { height: bigint; endOffset: number };
  /** Height of the block the file ends inside. */
  incompleteHeight: bigint;
  /** Whole records of the incomplete block in the file: its BeginBlock at least, never its EndBlock. */
  incompleteRecords: number;
  /** Size of the file. */
  fileBytes: number;
}

export interface EventFileSummary extends SimulationSummary {
  /** Only for a cut file: where it ends. The counts describe its whole blocks only. */
  cut?: FileCut;
}

/**
 * Writes the events of `opts` to `path` (replacing it). Records are numbered
 * from 0, as the core numbers them. A cut file is the uncut file of the same
 * options followed by part of one more block.
 */
export async function writeEventFile(path: string, opts: WriteOptions): Promise<EventFileSummary> {
  const file = await open(path, 'w');
  let writing: Promise<unknown> = Promise.resolve();
  try {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let offset = 0;
    // One write in flight while the next chunk is generated.
    const flush = async (): Promise<void> => {
      const chunk = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await writing;
      const write = file.write(chunk);
      // Awaited later; until then a failure must not count as unhandled.
      write.catch(() => undefined);
      writing = write;
    };
    const push = (record: Buffer): void => {
      pending.push(record);
      pendingBytes += record.length;
      offset += record.length;
    };

    // With a cut, the extra block's records are held back until it is complete.
    let extra: Buffer[] | undefined;
    let lastWholeBlock: FileCut['lastWholeBlock'];
    let lastEnded: bigint | undefined;
    let extraHeight = 0n;
    const onExtraBlock = (): void => {
      extra = [];
      if (lastEnded !== undefined) lastWholeBlock = { height: lastEnded, endOffset: offset };
    };
    const events = simulateEvents(opts, opts.cut === undefined ? {} : { onExtraBlock });
    let seq = 0n;
    let summary: SimulationSummary;
    for (;;) {
      const next = events.next();
      if (next.done === true) {
        summary = next.value;
        break;
      }
      const e = next.value;
      const record = encodeRecord(seq++, encodeBusEvent(e));
      if (extra !== undefined) {
        if (e.kind === 'beginBlock') extraHeight = e.height;
        extra.push(record);
        continue;
      }
      push(record);
      if (e.kind === 'endBlock') {
        lastEnded = e.height;
        opts.onBlock?.(e.height);
      }
      if (pendingBytes >= CHUNK_BYTES) await flush();
    }

    let cut: FileCut | undefined;
    if (opts.cut !== undefined && extra !== undefined) {
      const { records, partial } = cutShort(extra, opts.cut, new Random(opts.seed, CUT_STREAM));
      for (const r of records) push(r);
      if (partial !== undefined) push(partial);
      cut = {
        how: opts.cut,
        ...(lastWholeBlock === undefined ? {} : { lastWholeBlock }),
        incompleteHeight: extraHeight,
        incompleteRecords: records.length,
        fileBytes: offset,
      };
    }
    if (pendingBytes > 0) await flush();
    await writing;
    return cut === undefined ? summary : { ...summary, cut };
  } finally {
    await writing.catch(() => undefined);
    await file.close();
  }
}

/**
 * The part of a block's records (BeginBlock first, EndBlock last) that a cut
 * file keeps: whole records from the BeginBlock on, never the EndBlock, and
 * for a cut inside a record the start of the next one: a quarter of the time
 * part of its header (the size and sequence number), else its header and part
 * of its event.
 */
function cutShort(block: Buffer[], how: CutKind, rng: Random): { records: Buffer[]; partial?: Buffer } {
  // 1 .. length-1 whole records: the BeginBlock always, the EndBlock never.
  const whole = 1 + rng.int(block.length - 1);
  const records = block.slice(0, whole);
  if (how === 'boundary') return { records };
  const next = block[whole] as Buffer;
  const bytes = rng.chance(0.25)
    ? 1 + rng.int(RECORD_HEADER_BYTES - 1)
    : RECORD_HEADER_BYTES + rng.int(next.length - RECORD_HEADER_BYTES);
  return { records, partial: next.subarray(0, bytes) };
}
