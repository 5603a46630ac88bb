/**
 * Decoder fuzzing's yardstick: what a clean input stores, where each of its
 * blocks ends, and the checks every mutated input's ingestion must pass.
 *
 * Whatever a mutation does, ingestion must stop clearly at the last whole
 * block: every block that ended before the first changed byte is stored as
 * the clean input stores it; a stop is an IngestError (LQ_INGEST_STOPPED)
 * naming the source and the position, after which nothing was stored; and an
 * input that ends inside a block says so (stats.incompleteBlock) instead of
 * silently storing less. Blocks from the changed one on may differ, since
 * the framing has no checksum and a changed byte can be a valid other value.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Block } from '../../src/domain/block.js';
import { IngestError } from '../../src/errors.js';
import { ingest, type IngestStats } from '../../src/ingest/ingester.js';
import type { EventSource } from '../../src/ingest/source.js';
import { TimedOut, within } from './fuzz.js';
import { RecordingStore } from './recording-store.js';

/** One ingestion run's time limit: a clean real recording takes well under a second. */
export const RUN_LIMIT_MS = 15_000;

/** A block as text (bigints and bytes spelled out), for comparing and for naming the one that differs. */
export function blockText(b: Block): string {
  return JSON.stringify(b, (_k, v: unknown) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
    return v;
  });
}

const digest = (b: Block) => createHash('sha256').update(blockText(b)).digest('hex');

export interface Outcome {
  blocks: Block[];
  /** Each stored block's position (its EndBlock's offset), from onBlock. */
  positions: number[];
  stats?: IngestStats;
  error?: unknown;
}

/** Ingests `source` into memory, within RUN_LIMIT_MS; a failure is part of the outcome, a hang fails. */
export async function ingestOutcome(source: EventSource): Promise<Outcome> {
  const store = new RecordingStore();
  const positions: number[] = [];
  try {
    const stats = await within(RUN_LIMIT_MS, `ingesting ${source.name}`, ingest(source, store, { onBlock: (_b, _s, at) => positions.push(at) }));
    return { blocks: store.blocks, positions, stats };
  } catch (error) {
    if (error instanceof TimedOut) throw error;
    return { blocks: store.blocks, positions, error };
  }
}

/** What the clean input stores, and where each stored block's last record ends. */
export class Reference {
  readonly digests: string[];

  /** `ends[i]`: where the input must reach for stored block i to be whole (bytes, or a message count). */
  constructor(readonly blocks: Block[], readonly ends: number[]) {
    this.digests = blocks.map(digest);
  }

  /** How many stored blocks lie wholly before `position`: those a change there cannot touch. */
  wholeBefore(position: number): number {
    let k = 0;
    while (k < this.ends.length && this.ends[k]! <= position) k++;
    return k;
  }
}

/** How far the stored blocks must agree with the clean ones. */
export type Agreement =
  /** Exactly the clean blocks wholly before the change, and nothing else. */
  | 'exact'
  /** A prefix of the clean blocks: a change that shifts the framing stores nothing changed. */
  | 'prefix'
  /** Every block but the one holding the change as the clean input stores it. */
  | 'allButChanged'
  /** Only the blocks before the change are known. */
  | 'before';

export interface StopCheck {
  what: string;
  source: string;
  /** The first changed byte (or message number) of the input. */
  changedAt: number;
  /** Where the record (or message) holding the change starts: no stop can be placed before it. */
  changedRecordAt: number;
  agreement: Agreement;
  /** Blocks wholly before the change must all be stored (false where a source may drop what it decoded last, gzip). */
  storesAllBefore?: boolean;
  /** For a truncation: whether the input ends where no block is open, so no incomplete block is to be reported. */
  endsAtBoundary?: boolean;
  /**
   * A live source (the socket), which never ends by itself: the test stopped
   * it, so a block left open is not reported as incomplete.
   */
  live?: boolean;
}

/** The checks every mutated input's ingestion must pass; see the module's comment. */
export function checkStop(ref: Reference, outcome: Outcome, c: StopCheck): void {
  const { what } = c;
  const stored = outcome.blocks;
  const k = ref.wholeBefore(c.changedAt);
  const error = outcome.error;
  if (error !== undefined) {
    assert.ok(error instanceof IngestError, `${what}: stopped with ${String(error)}, not an IngestError: a crash\n${(error as Error).stack ?? ''}`);
    assert.equal(error.code, 'LQ_INGEST_STOPPED');
    const position = error.position;
    assert.ok(position !== undefined, `${what}: the stop names no position: ${error.message}`);
    assert.equal(position.source, c.source, `${what}: the stop names its source`);
    assert.ok(error.message.startsWith(`${c.source}: `), `${what}: message names the source: ${error.message}`);
    assert.ok(new RegExp(`(offset|message) ${position.offset}\\b`).test(error.message), `${what}: message names the position: ${error.message}`);
    assert.ok(position.offset >= c.changedRecordAt, `${what}: stopped at ${position.offset}, before the changed record at ${c.changedRecordAt}: ${error.message}`);
    for (const at of outcome.positions) assert.ok(at < position.offset, `${what}: a block ending at ${at} stored, past the stop at ${position.offset}`);
  }
  for (let i = 1; i < stored.length; i++) {
    assert.equal(stored[i]!.height, stored[i - 1]!.height + 1n, `${what}: stored heights follow each other`);
  }
  const differs = (i: number) => digest(stored[i]!) !== ref.digests[i];
  for (let i = 0; i < Math.min(k, stored.length); i++) {
    assert.ok(!differs(i), `${what}: block ${i} (height ${stored[i]!.height}) ended before the change at ${c.changedAt} but differs from the clean one`);
  }
  if (c.storesAllBefore !== false) {
    assert.ok(stored.length >= k, `${what}: ${stored.length} blocks stored, but ${k} ended before the change at ${c.changedAt}${error ? `; stopped: ${(error as Error).message}` : ''}`);
  }
  assert.ok(stored.length <= ref.blocks.length, `${what}: ${stored.length} blocks stored, more than the clean input's ${ref.blocks.length}`);
  switch (c.agreement) {
    case 'exact':
      assert.equal(stored.length, k, `${what}: exactly the ${k} blocks before the change are stored, got ${stored.length}${error ? `; stopped: ${(error as Error).message}` : ''}`);
      break;
    case 'prefix':
      for (let i = k; i < stored.length; i++) assert.ok(!differs(i), `${what}: stored block ${i} (height ${stored[i]!.height}) is not the clean one`);
      break;
    case 'allButChanged':
      for (let i = k + 1; i < stored.length; i++) assert.ok(!differs(i), `${what}: block ${i} (height ${stored[i]!.height}), after the changed block ${k}, differs from the clean one`);
      break;
    case 'before':
      break;
  }
  if (error === undefined) {
    const stats = outcome.stats!;
    if (c.endsAtBoundary !== undefined) {
      assert.equal(stats.incompleteBlock === undefined, c.endsAtBoundary, `${what}: incomplete block reported: ${JSON.stringify(stats.incompleteBlock, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
    } else if (stored.length < ref.blocks.length && c.live !== true) {
      assert.ok(stats.incompleteBlock !== undefined, `${what}: ${ref.blocks.length - stored.length} fewer blocks stored than the clean input's, with no error and no incomplete block reported`);
    }
  }
}
