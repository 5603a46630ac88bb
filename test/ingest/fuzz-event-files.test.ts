/**
 * Event files mutated and ingested through the real file source, ingester
 * and assembler: a simulated chain's file, the real network's recording
 * (../shared/fixtures/system_tests.evt.gz, uncompressed), and that recording
 * as the gzip file it is. Records are cut off, swapped, repeated; bits are
 * flipped in their headers and events; bytes are inserted and removed. Each
 * run is held to test/support/ingest-fuzz.ts's checks against a clean ingest
 * of the same file (never a crash or a hang, a clear stop at the last whole
 * block naming the source and position), and to what its kind of damage
 * allows exactly: a cut file stores the whole blocks before the cut and says
 * whether one was left incomplete; a swapped or repeated record stops
 * ingestion there, having stored exactly the blocks before it.
 *
 * FUZZ_SEED reproduces a run; FUZZ_SCALE scales the run counts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { constants as zlib, createGunzip, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { decodeBusEvent } from '../../src/ingest/codec.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { RECORD_HEADER_BYTES } from '../../src/ingest/framing.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { fuzzRuns, fuzzSeed, Tally } from '../support/fuzz.js';
import { checkStop, ingestOutcome, Reference, type Agreement, type Outcome } from '../support/ingest-fuzz.js';
import { applyMutation, byteMutationArb, position } from '../support/mutations.js';
import { realRecording } from '../support/real-recording.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-fuzz-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** An event file and what its clean ingest stores. */
interface EventFile {
  bytes: Buffer;
  /** Where each record starts. */
  starts: number[];
  /** Where the file may end with no block open: its start, and after each record that leaves none open. */
  boundaries: Set<number>;
  ref: Reference;
}

let files = 0;
function writeTemp(bytes: Buffer, ext = 'events'): string {
  const path = join(dir, `f${files++}.${ext}`);
  writeFileSync(path, bytes);
  return path;
}

async function eventFile(bytes: Buffer): Promise<EventFile> {
  const starts: number[] = [];
  const boundaries = new Set([0]);
  let open = false;
  for (let at = 0; at < bytes.length; at += 4 + bytes.readUInt32BE(at)) {
    starts.push(at);
    const event = decodeBusEvent(bytes.subarray(at + RECORD_HEADER_BYTES, at + 4 + bytes.readUInt32BE(at)));
    if (event.kind === 'beginBlock') open = true;
    if (event.kind === 'endBlock') open = false;
    if (!open) boundaries.add(at + 4 + bytes.readUInt32BE(at));
  }
  const clean = await ingestOutcome(fileSource(writeTemp(bytes)));
  assert.equal(clean.error, undefined, 'the clean file ingests');
  assert.equal(clean.stats!.incompleteBlock, undefined);
  const ends = clean.positions.map((at) => at + 4 + bytes.readUInt32BE(at));
  return { bytes, starts, boundaries, ref: new Reference(clean.blocks, ends) };
}

/** Where the record holding byte `at` starts (the file's length past its end). */
function recordAt(f: EventFile, at: number): number {
  if (at >= f.bytes.length) return f.bytes.length;
  let lo = 0;
  let hi = f.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (f.starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return f.starts[lo]!;
}

const recordBytes = (f: EventFile, i: number) => f.bytes.subarray(f.starts[i]!, f.starts[i + 1] ?? f.bytes.length);

type FileMutation =
  | { kind: 'cut'; at: number }
  | { kind: 'swap'; record: number; distance: number }
  | { kind: 'repeat'; record: number }
  | { kind: 'headerFlip'; record: number; byte: number; bit: number }
  | { kind: 'eventFlip'; record: number; byte: number; bit: number }
  | { kind: 'bytes'; mutation: Exclude<Parameters<typeof applyMutation>[1], { kind: 'flip' | 'cut' }> };

const fileMutationArb: fc.Arbitrary<FileMutation> = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: position }),
  fc.record({ kind: fc.constant('swap' as const), record: position, distance: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('repeat' as const), record: position }),
  fc.record({ kind: fc.constant('headerFlip' as const), record: position, byte: fc.integer({ min: 0, max: RECORD_HEADER_BYTES - 1 }), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('eventFlip' as const), record: position, byte: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('eventFlip' as const), record: position, byte: position, bit: fc.integer({ min: 0, max: 7 }) }),
  byteMutationArb.filter((m) => m.kind === 'insert' || m.kind === 'delete').map((mutation) => ({ kind: 'bytes' as const, mutation: mutation as Extract<FileMutation, { kind: 'bytes' }>['mutation'] })),
);

interface Mutated {
  bytes: Buffer;
  changedAt: number;
  agreement: Agreement;
  /** For a cut: whether it falls where no block is open. */
  endsAtBoundary?: boolean;
  /** Whether ingestion must stop with an error (true), must not (false), or may. */
  stops?: boolean;
}

function mutate(f: EventFile, m: FileMutation): Mutated {
  const n = f.starts.length;
  const flip = (at: number, bit: number) => {
    const out = Buffer.from(f.bytes);
    out[at] = out[at]! ^ (1 << bit);
    return out;
  };
  switch (m.kind) {
    case 'cut': {
      const at = m.at % f.bytes.length;
      return { bytes: f.bytes.subarray(0, at), changedAt: at, agreement: 'exact', endsAtBoundary: f.boundaries.has(at), stops: false };
    }
    case 'swap': {
      // Records travel with their sequence numbers: the one out of turn stops ingestion.
      const a = m.record % (n - m.distance);
      const b = a + m.distance;
      const bytes = Buffer.concat([
        f.bytes.subarray(0, f.starts[a]), recordBytes(f, b), f.bytes.subarray(f.starts[a + 1], f.starts[b]), recordBytes(f, a),
        f.bytes.subarray(f.starts[b + 1] ?? f.bytes.length),
      ]);
      return { bytes, changedAt: f.starts[a]!, agreement: 'exact', stops: true };
    }
    case 'repeat': {
      const i = m.record % n;
      const end = f.starts[i + 1] ?? f.bytes.length;
      return { bytes: Buffer.concat([f.bytes.subarray(0, end), recordBytes(f, i), f.bytes.subarray(end)]), changedAt: end, agreement: 'exact', stops: true };
    }
    case 'headerFlip': {
      const at = f.starts[m.record % n]! + m.byte;
      return { bytes: flip(at, m.bit), changedAt: at, agreement: 'prefix' };
    }
    case 'eventFlip': {
      const i = m.record % n;
      const eventBytes = recordBytes(f, i).length - RECORD_HEADER_BYTES;
      const at = f.starts[i]! + RECORD_HEADER_BYTES + (eventBytes === 0 ? 0 : m.byte % eventBytes);
      return { bytes: flip(at, m.bit), changedAt: at, agreement: 'allButChanged' };
    }
    case 'bytes':
      return { ...applyMutation(f.bytes, m.mutation), agreement: 'prefix' };
  }
}

/** How a run ended, for the test's summary line. */
function ending(o: Outcome): string {
  if (o.error !== undefined) return 'stopped';
  return o.stats!.incompleteBlock !== undefined ? 'incomplete block' : 'ended';
}

async function fuzzFile(t: TestContext, name: string, f: EventFile, runs: number): Promise<void> {
  const seed = fuzzSeed(t);
  const endings = new Tally();
  const started = Date.now();
  await fc.assert(fc.asyncProperty(fileMutationArb, async (m) => {
    const mutated = mutate(f, m);
    const path = writeTemp(mutated.bytes);
    const source = fileSource(path);
    const outcome = await ingestOutcome(source);
    const what = `${name} ${JSON.stringify(m)}`;
    checkStop(f.ref, outcome, {
      what, source: source.name, changedAt: mutated.changedAt, changedRecordAt: recordAt(f, mutated.changedAt),
      agreement: mutated.agreement, ...(mutated.endsAtBoundary === undefined ? {} : { endsAtBoundary: mutated.endsAtBoundary }),
    });
    if (mutated.stops !== undefined) {
      assert.equal(outcome.error !== undefined, mutated.stops, `${what}: ${mutated.stops ? 'must stop with an error' : `must not fail: ${String(outcome.error)}`}`);
    }
    endings.add(`${m.kind}: ${ending(outcome)}`);
    rmSync(path);
  }), { numRuns: runs, seed });
  t.diagnostic(`${endings.total} mutated files of ${f.bytes.length} bytes (${f.ref.blocks.length} blocks) in ${Date.now() - started} ms: ${endings.toString()}`);
}

test('a simulated chain\'s event file, mutated: every run stops clearly at the last whole block', async (t) => {
  const path = join(dir, 'sim.events');
  await writeEventFile(path, { seed: 9, blocks: 40, ordersPerBlock: 8 });
  await fuzzFile(t, 'simulated', await eventFile(readFileSync(path)), fuzzRuns(250));
});

test('the real recording, mutated: every run stops clearly at the last whole block', async (t) => {
  const recording = realRecording(t);
  if (recording === undefined) return;
  await fuzzFile(t, 'real recording', await eventFile(gunzipSync(readFileSync(recording))), fuzzRuns(150));
});

/** What zlib makes of a damaged gzip file, as far as it gets. */
async function gunzipAsFarAsItGoes(gz: Buffer): Promise<Buffer> {
  const gunzip = createGunzip({ finishFlush: zlib.Z_SYNC_FLUSH });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve) => {
    gunzip.on('data', (c: Buffer) => chunks.push(c));
    gunzip.on('end', resolve);
    gunzip.on('error', () => resolve());
    gunzip.end(gz);
  });
  return Buffer.concat(chunks);
}

test('the real recording as its gzip file, damaged: every run stops clearly, the blocks before the damage stored as they are', async (t) => {
  const recording = realRecording(t);
  if (recording === undefined) return;
  const seed = fuzzSeed(t);
  const gz = readFileSync(recording);
  const f = await eventFile(gunzipSync(gz));
  const endings = new Tally();
  const started = Date.now();
  await fc.assert(fc.asyncProperty(byteMutationArb, async (m) => {
    const damaged = applyMutation(gz, m).bytes;
    // Where the uncompressed stream first differs from the clean one, as zlib reads the damaged file.
    const out = await gunzipAsFarAsItGoes(damaged);
    let changedAt = 0;
    while (changedAt < out.length && changedAt < f.bytes.length && out[changedAt] === f.bytes[changedAt]) changedAt++;
    const intact = changedAt === out.length && out.length === f.bytes.length;
    const path = writeTemp(damaged, 'gz');
    const source = fileSource(path);
    const outcome = await ingestOutcome(source);
    checkStop(f.ref, outcome, {
      what: `gzip ${JSON.stringify({ ...m, bytes: undefined })}`, source: source.name,
      // Past the end when zlib gives the clean stream back whole: nothing changed that a block holds.
      changedAt: intact ? f.bytes.length + 1 : changedAt,
      // zlib's failure is placed where its output stopped, which can be before the record it damaged.
      changedRecordAt: 0,
      agreement: 'before',
      // What of a damaged member is stored is the gzip reader's rule (README, "Ingestion guarantees"): the
      // records zlib gave before it failed, less a chunk, or nothing of a member whose check fails. Either
      // way, a prefix of the clean blocks, and a clear stop.
      storesAllBefore: false,
      // A cut that zlib gives back up to a block's end leaves no block incomplete (the rest is checked as ever).
      ...(changedAt === out.length && f.boundaries.has(out.length) ? { endsAtBoundary: true } : {}),
    });
    endings.add(`${m.kind}: ${ending(outcome)}`);
    rmSync(path);
  }), { numRuns: fuzzRuns(60), seed });
  t.diagnostic(`${endings.total} damaged gzip files in ${Date.now() - started} ms: ${endings.toString()}`);
});
