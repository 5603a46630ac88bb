import { createReadStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CorruptInputError } from '../errors.js';
import { MAX_EVENT_BYTES } from './framing.js';
import { busEventFromJson } from './json-codec.js';
import type { EventSource, EventBatch, SourceEvent } from './source.js';

const NEWLINE = 0x0a;
/**
 * The longest line read: as long as the largest event of an event file
 * (./framing.ts). A longer one, ended or not, is not an event, and a stream
 * that never sends a newline is refused here instead of filling memory.
 */
export const MAX_LINE_BYTES = MAX_EVENT_BYTES;

/**
 * One protobuf-JSON BusEvent per line, from a file or from stdin ("-").
 * Offsets are the byte offset of each line. A last line without its newline is
 * still read when the stream ends; if it is not JSON, the writer stopped
 * mid-line: the source ends with `cutOff` there instead of failing. A whole
 * line (ending in a newline) that is not JSON fails, and so does a line longer
 * than MAX_LINE_BYTES, as soon as it is. Blank lines are ignored.
 */
export function ndjsonSource(path: string, input: NodeJS.ReadableStream = process.stdin): EventSource {
  const fromStdin = path === '-';
  return {
    name: fromStdin ? 'ndjson:-' : `ndjson:${pathToFileURL(path).href}`,
    unit: 'byte',
    events: () => readLines(fromStdin ? input : createReadStream(path, { highWaterMark: 1 << 20 })),
  };
}

function parseLine(line: Buffer, offset: number): SourceEvent | undefined {
  const text = line.toString('utf8').trim();
  if (text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new CorruptInputError(`not JSON: ${(e as Error).message}`, { offset });
  }
  try {
    return { event: busEventFromJson(value), offset };
  } catch (e) {
    if (e instanceof CorruptInputError) throw e.at(offset);
    throw e;
  }
}

/** Whether a line is JSON (or blank): a last line that is not was cut off by its writer. */
function isJson(line: Buffer): boolean {
  const text = line.toString('utf8').trim();
  try {
    if (text !== '') JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function tooLong(offset: number): CorruptInputError {
  return new CorruptInputError(`a line longer than ${MAX_LINE_BYTES} bytes: not an event`, { offset });
}

async function* readLines(stream: NodeJS.ReadableStream): AsyncGenerator<EventBatch> {
  // The start of a line whose newline has not come yet, as the chunks it came
  // in: joined once it has, so a line spanning many chunks is copied once, not
  // once per chunk (BENCHMARKS.md, "Figures behind the code").
  let partial: Buffer[] = [];
  let partialBytes = 0;
  /** Stream offset of the line being read. */
  let lineOffset = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    const batch: SourceEvent[] = [];
    let start = 0;
    let failure: unknown;
    try {
      for (let nl = buf.indexOf(NEWLINE); nl >= 0; nl = buf.indexOf(NEWLINE, start)) {
        if (partialBytes + nl - start > MAX_LINE_BYTES) throw tooLong(lineOffset);
        const line = partialBytes === 0 ? buf.subarray(start, nl) : Buffer.concat([...partial, buf.subarray(start, nl)]);
        partial = [];
        partialBytes = 0;
        const ev = parseLine(line, lineOffset);
        if (ev) batch.push(ev);
        lineOffset += line.length + 1;
        start = nl + 1;
      }
      if (start < buf.length) {
        partial.push(buf.subarray(start));
        partialBytes += buf.length - start;
        if (partialBytes > MAX_LINE_BYTES) throw tooLong(lineOffset);
      }
    } catch (e) {
      failure = e;
    }
    // Events before a bad line may complete a block: hand them over first.
    if (batch.length > 0) yield { events: batch };
    if (failure) throw failure;
  }
  const rest = Buffer.concat(partial);
  if (!isJson(rest)) {
    yield { events: [], cutOff: { offset: lineOffset, bytes: rest.length } };
    return;
  }
  const last = parseLine(rest, lineOffset);
  if (last) yield { events: [last] };
}
