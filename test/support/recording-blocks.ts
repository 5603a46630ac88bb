/**
 * A recording's events, and where each block ends among them, so that a
 * test can feed a store a recording up to any block (as NDJSON, on stdin).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { decodeBusEvent } from '../../src/ingest/codec.js';
import { RecordSplitter } from '../../src/ingest/framing.js';
import { busEventToJson } from '../../src/ingest/json-codec.js';

export interface RecordingBlocks {
  /** Each event as one NDJSON line. */
  lines: string[];
  /** Each EndBlock, in order: its height, and how many events run up to and including it. */
  ends: { height: bigint; events: number }[];
}

export function recordingBlocks(path: string): RecordingBlocks {
  const bytes = readFileSync(path);
  const splitter = new RecordSplitter();
  splitter.push(path.endsWith('.gz') ? gunzipSync(bytes) : bytes);
  const lines: string[] = [];
  const ends: RecordingBlocks['ends'] = [];
  for (let r = splitter.next(); r; r = splitter.next()) {
    const event = decodeBusEvent(r.event);
    lines.push(JSON.stringify(busEventToJson(event)));
    if (event.kind === 'endBlock') ends.push({ height: event.height, events: lines.length });
  }
  return { lines, ends };
}

/** The NDJSON of the events from `from` up to (not including) `to`. */
export const ndjson = (r: RecordingBlocks, from: number, to: number) => `${r.lines.slice(from, to).join('\n')}\n`;
