/**
 * The two other sources, fed damaged input and held to the checks of
 * test/support/ingest-fuzz.ts against the same input ingested clean:
 * - NDJSON: lines cut, removed, repeated, swapped, replaced by garbage, a
 *   character's bit flipped, or one field of the event given another value or
 *   type, read by the real NDJSON source, JSON codec and ingester;
 * - the nanomsg socket: a core's SP stream (header and length-prefixed
 *   messages) with a bit flipped, bytes inserted or removed, or cut off, sent
 *   by a real TCP peer to the real socket source.
 * Events are a simulated chain's, and the real recording's where it is there.
 *
 * FUZZ_SEED reproduces a run; FUZZ_SCALE scales the run counts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { decodeBusEvent, encodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { RecordSplitter } from '../../src/ingest/framing.js';
import { ingest } from '../../src/ingest/ingester.js';
import { busEventToJson } from '../../src/ingest/json-codec.js';
import { encodeSpHeader, encodeSpMessage, SpProtocol } from '../../src/ingest/nanomsg.js';
import { ndjsonSource } from '../../src/ingest/ndjson-source.js';
import { socketSource } from '../../src/ingest/socket-source.js';
import { simulateEvents } from '../../src/simulate/simulate.js';
import { fuzzRuns, fuzzSeed, Tally, within } from '../support/fuzz.js';
import { checkStop, ingestOutcome, Reference, RUN_LIMIT_MS, type Agreement, type Outcome } from '../support/ingest-fuzz.js';
import { applyMutation, byteMutationArb, position } from '../support/mutations.js';
import { realRecording } from '../support/real-recording.js';
import { RecordingStore } from '../support/recording-store.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-fuzz-sources-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SIMULATED: BusEvent[] = [...simulateEvents({ seed: 6, blocks: 40, ordersPerBlock: 8 })];

/** The real recording's events, or undefined (the test then says why it is skipped). */
function realEvents(t: TestContext): BusEvent[] | undefined {
  const path = realRecording(t);
  if (path === undefined) return undefined;
  const splitter = new RecordSplitter();
  splitter.push(gunzipSync(readFileSync(path)));
  const events: BusEvent[] = [];
  for (let r = splitter.next(); r; r = splitter.next()) events.push(decodeBusEvent(r.event));
  return events;
}

let files = 0;
function writeTemp(text: Buffer): string {
  const path = join(dir, `f${files++}.ndjson`);
  writeFileSync(path, text);
  return path;
}

function ending(o: Outcome): string {
  if (o.error !== undefined) return 'stopped';
  return o.stats?.incompleteBlock !== undefined ? 'incomplete block' : 'ended';
}

// ---------------------------------------------------------------- NDJSON

type LineMutation =
  | { kind: 'cut'; at: number }
  | { kind: 'remove' | 'repeat'; line: number }
  | { kind: 'swap'; line: number }
  | { kind: 'garbage'; line: number; text: string }
  | { kind: 'flip'; line: number; byte: number; bit: number }
  | { kind: 'field'; line: number; path: number; value: unknown; remove: boolean };

const lineMutationArb: fc.Arbitrary<LineMutation> = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: position }),
  fc.record({ kind: fc.constantFrom('remove' as const, 'repeat' as const), line: position }),
  fc.record({ kind: fc.constant('swap' as const), line: position }),
  fc.record({ kind: fc.constant('garbage' as const), line: position, text: fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.json({ maxDepth: 2 })) }),
  fc.record({ kind: fc.constant('flip' as const), line: position, byte: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('field' as const), line: position, path: position, value: fc.jsonValue({ maxDepth: 2 }), remove: fc.boolean() }),
);

/** Every path to a value inside a JSON value. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  const out: string[][] = [prefix];
  if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
}

function setAt(value: unknown, path: string[], replacement: unknown, remove: boolean): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string, ...string[]];
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string, unknown>;
  if (rest.length === 0 && remove) delete copy[head];
  else copy[head] = setAt(copy[head], rest, replacement, remove);
  return copy;
}

interface NdjsonInput {
  lines: string[];
  /** Where each line starts in the text (and, last, the text's length). */
  starts: number[];
  /** Offsets at which the text may end with no block open. */
  boundaries: Set<number>;
  ref: Reference;
}

async function ndjsonInput(events: BusEvent[]): Promise<NdjsonInput> {
  const lines = events.map((e) => JSON.stringify(busEventToJson(e)));
  const starts = [0];
  const boundaries = new Set([0]);
  let open = false;
  lines.forEach((line, i) => {
    const end = starts[i]! + Buffer.byteLength(line);
    starts.push(end + 1);
    if (events[i]!.kind === 'beginBlock') open = true;
    if (events[i]!.kind === 'endBlock') open = false;
    // A last line is read whole with or without its newline.
    if (!open) boundaries.add(end).add(end + 1);
  });
  const text = Buffer.from(lines.map((l) => `${l}\n`).join(''));
  const clean = await ingestOutcome(ndjsonSource(writeTemp(text)));
  assert.equal(clean.error, undefined, 'the clean NDJSON ingests');
  // A block is whole once its EndBlock's line is, newline or not.
  const ends = clean.positions.map((at) => text.indexOf('\n', at));
  return { lines, starts, boundaries, ref: new Reference(clean.blocks, ends) };
}

function mutateLines(input: NdjsonInput, m: LineMutation): { text: Buffer; changedAt: number; agreement: Agreement; endsAtBoundary?: boolean } {
  const lines = [...input.lines];
  const n = lines.length;
  const text = () => Buffer.from(lines.map((l) => `${l}\n`).join(''));
  const i = 'line' in m ? m.line % n : 0;
  switch (m.kind) {
    case 'cut': {
      const whole = text();
      const at = m.at % whole.length;
      return { text: whole.subarray(0, at), changedAt: at, agreement: 'exact', endsAtBoundary: input.boundaries.has(at) };
    }
    case 'remove':
      lines.splice(i, 1);
      return { text: text(), changedAt: input.starts[i]!, agreement: 'allButChanged' };
    case 'repeat':
      lines.splice(i, 0, lines[i]!);
      return { text: text(), changedAt: input.starts[i + 1]!, agreement: 'allButChanged' };
    case 'swap': {
      const j = Math.min(i + 1, n - 1);
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      return { text: text(), changedAt: input.starts[i]!, agreement: 'allButChanged' };
    }
    case 'garbage':
      lines[i] = m.text;
      return { text: text(), changedAt: input.starts[i]!, agreement: 'allButChanged' };
    case 'flip': {
      const bytes = Buffer.from(lines[i]!);
      const at = m.byte % bytes.length;
      bytes[at] = bytes[at]! ^ (1 << m.bit);
      lines[i] = bytes.toString('latin1');
      const out = Buffer.concat(lines.map((l, k) => Buffer.from(`${l}\n`, k === i ? 'latin1' : 'utf8')));
      return { text: out, changedAt: input.starts[i]! + at, agreement: 'allButChanged' };
    }
    case 'field': {
      const event = JSON.parse(lines[i]!) as unknown;
      const all = paths(event);
      lines[i] = JSON.stringify(setAt(event, all[m.path % all.length]!, m.value, m.remove)) ?? 'null';
      return { text: text(), changedAt: input.starts[i]!, agreement: 'allButChanged' };
    }
  }
}

async function fuzzNdjson(t: TestContext, name: string, events: BusEvent[], runs: number): Promise<void> {
  const seed = fuzzSeed(t);
  const input = await ndjsonInput(events);
  const endings = new Tally();
  const started = Date.now();
  await fc.assert(fc.asyncProperty(lineMutationArb, async (m) => {
    const mutated = mutateLines(input, m);
    const path = writeTemp(mutated.text);
    const source = ndjsonSource(path);
    const outcome = await ingestOutcome(source);
    const lineAt = input.starts.filter((s) => s <= mutated.changedAt).at(-1) ?? 0;
    checkStop(input.ref, outcome, {
      what: `${name} NDJSON ${JSON.stringify(m)}`, source: source.name, changedAt: mutated.changedAt, changedRecordAt: lineAt,
      agreement: mutated.agreement, ...(mutated.endsAtBoundary === undefined ? {} : { endsAtBoundary: mutated.endsAtBoundary }),
    });
    if (m.kind === 'cut') assert.equal(outcome.error, undefined, `${name} NDJSON cut at ${mutated.changedAt}: a cut text is not an error`);
    endings.add(`${m.kind}: ${ending(outcome)}`);
    rmSync(path);
  }), { numRuns: runs, seed });
  t.diagnostic(`${endings.total} damaged NDJSON texts of ${input.lines.length} lines (${input.ref.blocks.length} blocks) in ${Date.now() - started} ms: ${endings.toString()}`);
}

test('NDJSON of a simulated chain, damaged: every run stops clearly at the last whole block', async (t) => {
  await fuzzNdjson(t, 'simulated', SIMULATED, fuzzRuns(200));
});

test('NDJSON of the real recording, damaged: every run stops clearly at the last whole block', async (t) => {
  const events = realEvents(t);
  if (events !== undefined) await fuzzNdjson(t, 'real recording', events, fuzzRuns(60));
});

// ---------------------------------------------------------------- the nanomsg socket

/** A core's stream: the SP header, then one message per event; and where each message ends. */
function spStream(events: BusEvent[]): { stream: Buffer; messageEnds: number[] } {
  const frames = [encodeSpHeader(SpProtocol.PAIR), ...events.map((e) => encodeSpMessage(encodeBusEvent(e)))];
  const messageEnds: number[] = [];
  let at = 0;
  frames.forEach((f, i) => {
    at += f.length;
    if (i > 0) messageEnds.push(at);
  });
  return { stream: Buffer.concat(frames), messageEnds };
}

const PEER_GONE = /disconnected|dropped|refused/;

/**
 * A peer connects, sends `stream` and closes; once the listener has seen it
 * go and every message it received has been taken, ingestion is stopped (a
 * socket source never ends by itself). Within RUN_LIMIT_MS, or it hangs.
 */
async function socketOutcome(stream: Buffer): Promise<Outcome & { source: string; logs: string[] }> {
  const controller = new AbortController();
  const logs: string[] = [];
  let peerGone!: () => void;
  const gone = new Promise<void>((resolve) => (peerGone = resolve));
  let listening!: (port: number) => void;
  const port = new Promise<number>((resolve) => (listening = resolve));
  const source = socketSource({
    host: '127.0.0.1', port: 0, signal: controller.signal, handshakeTimeoutMs: 2_000,
    log: (_level, msg) => {
      logs.push(msg);
      if (PEER_GONE.test(msg)) peerGone();
    },
    onListening: (a) => listening(a.port),
  });
  const store = new RecordingStore();
  const positions: number[] = [];
  const done = ingest(source, store, { onBlock: (_b, _s, at) => positions.push(at) }, controller.signal)
    .then((stats) => ({ stats }), (error: unknown) => ({ error }));
  const run = async () => {
    const peer = connect({ host: '127.0.0.1', port: await port });
    peer.on('error', () => undefined); // a reset after the listener dropped it
    peer.end(stream);
    await Promise.race([gone, done]);
    while (source.stats.queuedMessages > 0 && !controller.signal.aborted) {
      if (await Promise.race([done.then(() => true), sleep(2).then(() => false)])) break;
    }
    peer.destroy();
    controller.abort();
    return done;
  };
  const ended = await within(RUN_LIMIT_MS, `the socket source fed ${stream.length} bytes`, run());
  return { blocks: store.blocks, positions, ...ended, source: source.name, logs };
}

async function fuzzSocket(t: TestContext, name: string, events: BusEvent[], runs: number): Promise<void> {
  const seed = fuzzSeed(t);
  const { stream, messageEnds } = spStream(events);
  const clean = await socketOutcome(stream);
  assert.equal(clean.error, undefined, `the clean stream ingests: ${String(clean.error)}`);
  // Positions are message numbers (from 1): block i is whole once the stream reaches its EndBlock's end.
  const ref = new Reference(clean.blocks, clean.positions.map((n) => messageEnds[n - 1]!));
  assert.ok(ref.blocks.length > 10, 'the clean stream stores its blocks');
  const endings = new Tally();
  const started = Date.now();
  await fc.assert(fc.asyncProperty(byteMutationArb, async (m) => {
    const { bytes, changedAt } = applyMutation(stream, m);
    const outcome = await socketOutcome(bytes);
    // The message holding the first changed byte, numbered from 1 (0: the header).
    const changedMessage = messageEnds.filter((end) => end <= changedAt).length + (changedAt < 8 ? 0 : 1);
    const what = `${name} SP stream ${JSON.stringify({ ...m, bytes: undefined })}`;
    checkStop(ref, outcome, { what, source: outcome.source, changedAt, changedRecordAt: changedMessage, agreement: 'allButChanged', live: true });
    assert.ok(outcome.logs.some((l) => PEER_GONE.test(l)) || outcome.error !== undefined, `${what}: the peer's end is logged: ${outcome.logs.join(' | ')}`);
    endings.add(`${m.kind}: ${outcome.error === undefined ? 'peer gone' : 'stopped'}`);
  }), { numRuns: runs, seed });
  t.diagnostic(`${endings.total} damaged SP streams of ${events.length} messages (${ref.blocks.length} blocks) in ${Date.now() - started} ms: ${endings.toString()}`);
}

test('the socket source, a simulated core\'s damaged stream: every run stops clearly at the last whole block', async (t) => {
  await fuzzSocket(t, 'simulated', SIMULATED, fuzzRuns(120));
});

test('the socket source, the real recording\'s damaged stream: every run stops clearly at the last whole block', async (t) => {
  const events = realEvents(t);
  if (events !== undefined) await fuzzSocket(t, 'real recording', events, fuzzRuns(40));
});
