/**
 * Crash safety, for real: `ledger-query ingest` child processes are killed with
 * SIGKILL at random points (seeded), restarted, and resumed; the store must
 * then answer a fixed set of queries exactly as a clean single run does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { CLI } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-crash-'));
const file = join(dir, 'sim.events');
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `ingest`, optionally SIGKILLed after `killAfterMs`; tells whether the kill landed mid-run. */
function runIngest(dataDir: string, killAfterMs?: number): Promise<{ killed: boolean; ms: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'ingest', file, '--data-dir', dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      if (signal === 'SIGKILL') return resolve({ killed: true, ms, stderr });
      if (code !== 0) return reject(new Error(`ingest exited ${code}: ${stderr}`));
      resolve({ killed: false, ms, stderr });
    });
  });
}

/** A small seeded PRNG so a failing kill schedule can be replayed. */
function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const QUERIES = [
  '/api/v2/orders?pagination.first=5000',
  '/api/v2/orders?pagination.last=5000&pagination.newestFirst=false',
  '/api/v2/orders?filter.statuses=STATUS_ACTIVE&pagination.first=3000',
  '/api/v2/orders?filter.liveOnly=true&pagination.first=5000',
  '/api/v2/orders?filter.statuses=STATUS_CANCELLED,STATUS_EXPIRED,STATUS_REJECTED&pagination.first=5000',
  '/api/v2/orders?filter.partyIds=network&pagination.first=5000',
  '/api/v2/erc20/multisigcontrol/signer/added/bundles?pagination.first=5000',
  '/health',
];

async function answers(dataDir: string): Promise<string[]> {
  const store: QueryStore = await openStore({ dataDir }, { readOnly: true });
  const app: FastifyInstance = await buildApp({ store });
  try {
    const out: string[] = [];
    for (const url of QUERIES) out.push((await app.inject({ url })).body);
    return out;
  } finally {
    await app.close();
    await store.close();
  }
}

let cleanMs = 0;
let clean: string[] = [];

before(async () => {
  await writeEventFile(file, { seed: 99, blocks: 500, ordersPerBlock: 60 });
  const cleanDir = join(dir, 'clean');
  cleanMs = (await runIngest(cleanDir)).ms;
  clean = await answers(cleanDir);
});

test('SIGKILL at random points, then resume: the store answers exactly like a clean run', async () => {
  const random = mulberry32(Number(process.env.CRASH_SEED ?? 7));
  let kills = 0;
  // Rounds go on until 10 kills have landed mid-run (bounded), so a noisy clean-run timing cannot starve the test.
  for (let round = 0; kills < 10 && round < 16; round++) {
    const dataDir = join(dir, `crashed-${round}`);
    // A kill somewhere in a run from scratch, a second one early in the resumed run, then a run to the end.
    for (const span of [0.9, 0.45]) {
      const r = await runIngest(dataDir, cleanMs * (0.03 + random() * span));
      if (r.killed) kills++;
    }
    const resumed = await runIngest(dataDir);
    assert.equal(resumed.killed, false);
    assert.deepEqual(await answers(dataDir), clean, `round ${round}: answers after crash and resume`);
    rmSync(dataDir, { recursive: true, force: true });
  }
  assert.ok(kills >= 10, `at least 10 kills landed mid-run (${kills})`);
});
