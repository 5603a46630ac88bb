/**
 * Stores to serve in a test: the simulator's network (always there), and the
 * real recording where ../shared holds it; each ingested by the real CLI
 * into a scratch folder, once per test file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli.js';

export interface ServedStore {
  dataDir: string;
  /** The event file it was ingested from. */
  source: string;
  remove(): void;
}

function ingestInto(dir: string, source: string): string {
  const dataDir = join(dir, 'data');
  const r = runCli(['ingest', source, '--data-dir', dataDir]);
  if (r.status !== 0) throw new Error(`ingest ${source}: ${r.stderr}`);
  return dataDir;
}

/** The simulator's network (seed 7): orders of every kind, and bundles, which the real recording has none of. */
export function simulatedStore(blocks = 60, ordersPerBlock = 10): ServedStore {
  const dir = mkdtempSync(join(tmpdir(), 'lq-sim-store-'));
  const source = join(dir, 'net.events');
  const sim = runCli(['simulate', '--out', source, '--blocks', String(blocks), '--seed', '7', '--orders-per-block', String(ordersPerBlock)]);
  if (sim.status !== 0) throw new Error(`simulate: ${sim.stderr}`);
  return { dataDir: ingestInto(dir, source), source, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The real recording at `recording`, ingested. */
export function recordingStore(recording: string): ServedStore {
  const dir = mkdtempSync(join(tmpdir(), 'lq-real-store-'));
  return { dataDir: ingestInto(dir, recording), source: recording, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
