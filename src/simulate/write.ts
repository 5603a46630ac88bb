/**
 * Writes a simulated chain as the core's framed event file.
 */
import { open } from 'node:fs/promises';
import { encodeBusEvent } from '../ingest/codec.js';
import { encodeRecord } from '../ingest/framing.js';
import { simulateEvents, type SimulateOptions, type SimulationSummary } from './simulate.js';

/** Records are gathered into chunks of about this size, so the file sees few large writes. */
const CHUNK_BYTES = 8 * 1024 * 1024;


/** Writes the events of `opts` to `path` (replacing it); seq numbers count from 1. */
export async function writeEventFile(path: string, opts: SimulateOptions): Promise<SimulationSummary> {
  const file = await open(path, 'w');
  let writing: Promise<unknown> = Promise.resolve();
  try {
    const events = simulateEvents(opts);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let seq = 0n;
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
    for (;;) {
      const next = events.next();
      if (next.done === true) {
        if (pendingBytes > 0) await flush();
        await writing;
        return next.value;
      }
      const record = encodeRecord(++seq, encodeBusEvent(next.value));
      pending.push(record);
      pendingBytes += record.length;
      if (pendingBytes >= CHUNK_BYTES) await flush();
    }
  } finally {
    await writing.catch(() => undefined);
    await file.close();
  }
}
