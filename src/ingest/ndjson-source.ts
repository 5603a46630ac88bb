import { createReadStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CorruptInputError } from '../errors.js';
import { busEventFromJson } from './json-codec.js';
import type { EventSource, SourceBatch, SourceEvent } from './source.js';

const NEWLINE = 0x0a;

/**
 * One protobuf-JSON BusEvent per line, from a file or from stdin ("-").
 * Offsets are the byte offset of each line. A last line without its newline is
 * still read when the stream ends; if it is not JSON, the writer stopped
 * mid-line: the source ends with `cutOff` there instead of failing. A whole
 * line (ending in a newline) that is not JSON fails. Blank lines are ignored.
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

async function* readLines(stream: NodeJS.ReadableStream): AsyncGenerator<SourceBatch> {
  let rest: Buffer = Buffer.alloc(0);
  let restOffset = 0;
  for await (const chunk of stream) {
    const buf = rest.length ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    const batch: SourceEvent[] = [];
    let start = 0;
    let failure: unknown;
    try {
      for (let nl = buf.indexOf(NEWLINE); nl >= 0; nl = buf.indexOf(NEWLINE, start)) {
        const ev = parseLine(buf.subarray(start, nl), restOffset + start);
        if (ev) batch.push(ev);
        start = nl + 1;
      }
    } catch (e) {
      failure = e;
    }
    // Events before a bad line may complete a block: hand them over first.
    if (batch.length > 0) yield { events: batch };
    if (failure) throw failure;
    rest = buf.subarray(start);
    restOffset += start;
  }
  if (!isJson(rest)) {
    yield { events: [], cutOff: { offset: restOffset, bytes: rest.length } };
    return;
  }
  const last = parseLine(rest, restOffset);
  if (last) yield { events: [last] };
}
