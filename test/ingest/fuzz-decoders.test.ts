/**
 * The decoders on their own, fuzzed: BusEvent protobuf (codec.ts), BusEvent
 * JSON (json-codec.ts), the event file's record framing (framing.ts) and SP
 * message framing (nanomsg.ts). Inputs are random bytes and values, and real
 * events mutated (bits flipped, bytes inserted, removed, cut), in random
 * chunkings. Each decoder must either decode or refuse with a
 * CorruptInputError, never throw anything else, and a framing must hand out
 * exactly the clean records (messages) that lie before the first changed byte,
 * however the bytes are chunked.
 *
 * FUZZ_SEED reproduces a run; FUZZ_SCALE scales the run counts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CorruptInputError } from '../../src/errors.js';
import { decodeBusEvent, encodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { RecordSplitter, encodeRecord } from '../../src/ingest/framing.js';
import { busEventFromJson, busEventToJson } from '../../src/ingest/json-codec.js';
import { SpMessageSplitter, encodeSpMessage } from '../../src/ingest/nanomsg.js';
import { simulateEvents } from '../../src/simulate/simulate.js';
import { fuzzRuns, fuzzSeed, Tally } from '../support/fuzz.js';
import { applyMutation, byteMutationArb, chunkingArb, chunked, position } from '../support/mutations.js';

/** A simulated chain's events: every kind ledger-query stores, and some it skips. */
const EVENTS: BusEvent[] = [...simulateEvents({ seed: 4, blocks: 30, ordersPerBlock: 6 })];
const ENCODED = EVENTS.map((e) => Buffer.from(encodeBusEvent(e)));
const JSONS = EVENTS.map((e) => JSON.stringify(busEventToJson(e)));

/** Runs `decode`; anything thrown but a CorruptInputError fails, naming the input. */
function decodesOrRefuses<T>(what: string, decode: () => T): T | CorruptInputError {
  try {
    return decode();
  } catch (e) {
    if (e instanceof CorruptInputError) return e;
    assert.fail(`${what}: threw ${(e as Error)?.stack ?? String(e)}, not a CorruptInputError`);
  }
}

test('BusEvent protobuf: random bytes and mutated real events decode or are refused as corrupt, nothing else', (t) => {
  const seed = fuzzSeed(t);
  const outcomes = new Tally();
  const input = fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 400 }).map((a): Buffer => Buffer.from(a)) },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...ENCODED), fc.array(byteMutationArb, { minLength: 1, maxLength: 2 }))
      .map(([bytes, ms]) => ms.reduce<Buffer>((b, m) => applyMutation(b, m).bytes, bytes)) },
  );
  fc.assert(fc.property(input, (bytes) => {
    const result = decodesOrRefuses(`decodeBusEvent(${bytes.toString('hex')})`, () => decodeBusEvent(bytes));
    outcomes.add(result instanceof CorruptInputError ? 'refused' : `decoded ${result.kind}`);
  }), { numRuns: fuzzRuns(20_000), seed });
  t.diagnostic(`${outcomes.total} inputs: ${outcomes.toString()}`);
});

/** Every path to a value inside a JSON value. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
}

/** `value` with the value at `path` replaced (or, `replacement` undefined, removed). */
function replaced(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  if (rest.length === 0 && replacement === undefined) delete copy[head!];
  else copy[head!] = replaced(copy[head!], rest, replacement);
  return copy;
}

/** JSON values of every type, and the ones a decoder of numbers and strings finds hardest. */
const oddJson = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    '', '-', '1e400', '-0', '0x10', '18446744073709551616', '-9223372036854775809', '99999999999999999999', 1e308, -1, 1.5,
    2 ** 53, Number.MAX_SAFE_INTEGER + 2, 'STATUS_ACTIVE', 'BUS_EVENT_TYPE_ORDER', '\0', '\ud800', '%%%', '====', '__proto__',
    { __proto__: null }, [], {}, null, true,
  ),
);

test('BusEvent JSON: random JSON and real events with a field changed, removed or retyped are read or refused as corrupt, nothing else', (t) => {
  const seed = fuzzSeed(t);
  const outcomes = new Tally();
  const mutatedEvent = fc.tuple(fc.constantFrom(...JSONS), position, oddJson, fc.boolean()).map(([json, n, value, remove]) => {
    const event = JSON.parse(json) as unknown;
    const all = paths(event);
    return replaced(event, all[n % all.length]!, remove ? undefined : value);
  });
  // Keys the parser reads under another spelling (snake_case) too: both given, with different values.
  const doubled = fc.tuple(fc.constantFrom(...JSONS), oddJson).map(([json, value]) => {
    const event = JSON.parse(json) as Record<string, unknown>;
    return { ...event, chain_id: value, order: event.order === undefined ? undefined : { ...(event.order as object), created_at: value } };
  });
  // Through text, as a source reads it: a JSON.parse of the line, `__proto__` keys and all.
  const input = fc.oneof(mutatedEvent, mutatedEvent, doubled, fc.jsonValue({ maxDepth: 4 })).map((v) => JSON.parse(JSON.stringify(v) ?? 'null') as unknown);
  fc.assert(fc.property(input, (value) => {
    const result = decodesOrRefuses(`busEventFromJson(${JSON.stringify(value)})`, () => busEventFromJson(value));
    outcomes.add(result instanceof CorruptInputError ? 'refused' : `read ${result.kind}`);
  }), { numRuns: fuzzRuns(20_000), seed });
  t.diagnostic(`${outcomes.total} inputs: ${outcomes.toString()}`);
});

/** A stream of frames: where each ends, and each one's payload. */
interface Framing {
  stream: Buffer;
  ends: number[];
  payloads: Buffer[];
}

function framing(frames: Buffer[], payloads: Buffer[]): Framing {
  const ends: number[] = [];
  let at = 0;
  for (const f of frames) ends.push((at += f.length));
  return { stream: Buffer.concat(frames), ends, payloads };
}

/** The framings take the first blocks' events: every kind, and little enough to split a byte at a time thousands of times. */
const FRAMED = ENCODED.slice(0, 150);
const RECORDS = framing(FRAMED.map((e, i) => encodeRecord(BigInt(i), e)), FRAMED);
const MESSAGES = framing(FRAMED.map((e) => encodeSpMessage(e)), FRAMED);

/** How many frames of `f` end at or before byte `at`: those a change there cannot touch. */
const wholeBefore = (f: Framing, at: number) => f.ends.filter((end) => end <= at).length;
/** Where the frame holding byte `at` starts. */
const frameAt = (f: Framing, at: number) => {
  const i = wholeBefore(f, at);
  return i === 0 ? 0 : f.ends[i - 1]!;
};

test('event file framing: mutated and re-chunked streams give every record before the change, then more records or a CorruptInputError', (t) => {
  const seed = fuzzSeed(t);
  const outcomes = new Tally();
  fc.assert(fc.property(fc.option(byteMutationArb, { freq: 4 }), chunkingArb, (mutation, cuts) => {
    const { bytes, changedAt } = mutation === null ? { bytes: RECORDS.stream, changedAt: RECORDS.stream.length } : applyMutation(RECORDS.stream, mutation);
    const splitter = new RecordSplitter();
    const records: { event: Buffer; offset: number }[] = [];
    let error: CorruptInputError | undefined;
    for (const chunk of chunked(bytes, cuts)) {
      splitter.push(chunk);
      const r = decodesOrRefuses('RecordSplitter.next', () => {
        for (let rec = splitter.next(); rec; rec = splitter.next()) records.push(rec);
      });
      if (r instanceof CorruptInputError) {
        error = r;
        break;
      }
    }
    const before = wholeBefore(RECORDS, changedAt);
    assert.ok(records.length >= before || error !== undefined, `${records.length} records, ${before} lay before the change`);
    for (let i = 0; i < Math.min(before, records.length); i++) {
      const { offset, event } = records[i]!;
      const start = i === 0 ? 0 : RECORDS.ends[i - 1]!;
      if (offset !== start || !event.equals(RECORDS.payloads[i]!)) assert.fail(`record ${i}, before the change, is not the clean one`);
    }
    if (error) assert.ok(error.offset !== undefined && error.offset >= frameAt(RECORDS, changedAt), `the error at ${error.offset} is placed at or after the changed record, at ${frameAt(RECORDS, changedAt)}`);
    if (mutation === null) {
      assert.equal(records.length, FRAMED.length, 'a clean stream, however chunked, gives every record');
      assert.equal(splitter.pending, 0);
    }
    outcomes.add(error ? 'refused' : splitter.pending > 0 ? 'ends inside a record' : 'whole records');
  }), { numRuns: fuzzRuns(3_000), seed });
  t.diagnostic(`${outcomes.total} streams: ${outcomes.toString()}`);
});

test('SP message framing: mutated and re-chunked streams give every message before the change, each within the maximum, or a CorruptInputError', (t) => {
  const seed = fuzzSeed(t);
  const outcomes = new Tally();
  const MAX = 4096;
  fc.assert(fc.property(fc.option(byteMutationArb, { freq: 4 }), chunkingArb, (mutation, cuts) => {
    const { bytes, changedAt } = mutation === null ? { bytes: MESSAGES.stream, changedAt: MESSAGES.stream.length } : applyMutation(MESSAGES.stream, mutation);
    const splitter = new SpMessageSplitter(MAX);
    const messages: Buffer[] = [];
    let error: CorruptInputError | undefined;
    let received = 0;
    for (const chunk of chunked(bytes, cuts)) {
      splitter.push(chunk);
      received += chunk.length;
      const r = decodesOrRefuses('SpMessageSplitter.next', () => {
        for (let m = splitter.next(); m !== undefined; m = splitter.next()) {
          assert.ok(m.length <= MAX, `a message of ${m.length} bytes, above the maximum`);
          messages.push(m);
        }
      });
      if (r instanceof CorruptInputError) {
        error = r;
        break;
      }
    }
    const before = wholeBefore(MESSAGES, changedAt);
    assert.ok(messages.length >= before || error !== undefined, `${messages.length} messages, ${before} lay before the change`);
    for (let i = 0; i < Math.min(before, messages.length); i++) {
      if (!messages[i]!.equals(MESSAGES.payloads[i]!)) assert.fail(`message ${i}, before the change, is not the clean one`);
    }
    assert.ok(messages.reduce((n, m) => n + 8 + m.length, 0) <= received, 'never more bytes out than in');
    if (mutation === null) {
      assert.equal(messages.length, FRAMED.length, 'a clean stream, however chunked, gives every message');
      assert.equal(splitter.pendingBytes, 0);
    }
    outcomes.add(error ? 'refused' : splitter.pendingBytes > 0 ? 'ends inside a message' : 'whole messages');
  }), { numRuns: fuzzRuns(3_000), seed });
  t.diagnostic(`${outcomes.total} streams: ${outcomes.toString()}`);
});
