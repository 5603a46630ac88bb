/**
 * Ingestion benchmark: events/s for a simulated file of >= 1M order events into
 * a fresh embedded store, in one run beside
 *  - reading and decoding the same file without storing it (the ceiling the
 *    store is measured against), and
 *  - the same ingest committing every block on its own (what grouping saves),
 *  - the same ingest reading and writing on one thread (what the writer thread saves).
 * Usage: npm run bench:ingest
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CommitLimits } from '../src/ingest/commit-group.js';
import { fileSource } from '../src/ingest/file-source.js';
import { ingest } from '../src/ingest/ingester.js';
import { openStore, openWriter } from '../src/store/open.js';
import { eventFile } from './dataset.js';

const rate = (n: number) => `${Math.round(n).toLocaleString('en-US')} events/s`;

async function timedIngest(file: string, dataDir: string, commit?: Partial<CommitLimits>, writerThread = true) {
  rmSync(dataDir, { recursive: true, force: true });
  const store = writerThread ? await openWriter({ dataDir }) : await openStore({ dataDir });
  const t = performance.now();
  const stats = await ingest(fileSource(file), store, { commit });
  const secs = (performance.now() - t) / 1000;
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { rate: stats.events / secs, secs, blocks: stats.blocksCommitted };
}

async function main() {
  const { file, dir, summary } = await eventFile({ name: 'ingest-1m', seed: 7, blocks: 10_000, ordersPerBlock: 40 });
  if (summary.orderEvents < 1_000_000) throw new Error(`only ${summary.orderEvents} order events; raise blocks`);
  console.log(`file: ${summary.events} events (${summary.orderEvents} order events, ${summary.orders} orders) in ${summary.blocks} blocks`);

  const t = performance.now();
  let decoded = 0;
  for await (const batch of fileSource(file).events()) decoded += batch.events.length;
  const decodeSecs = (performance.now() - t) / 1000;
  const decodeRate = decoded / decodeSecs;
  console.log(`read + decode only          : ${rate(decodeRate)} (${decodeSecs.toFixed(1)} s)`);

  const dataDir = join(dir, 'ingest-store');
  const single = await timedIngest(file, dataDir, { maxBlocks: 1 });
  console.log(`ingest, a commit per block  : ${rate(single.rate)} (${single.secs.toFixed(1)} s, ${single.blocks} blocks)`);
  const oneThread = await timedIngest(file, dataDir, undefined, false);
  console.log(`ingest, grouped, one thread : ${rate(oneThread.rate)} (${oneThread.secs.toFixed(1)} s, ${oneThread.blocks} blocks)`);
  const grouped = await timedIngest(file, dataDir);
  console.log(`ingest, grouped commits     : ${rate(grouped.rate)} (${grouped.secs.toFixed(1)} s, ${grouped.blocks} blocks)  <- the figure`);
  console.log(`grouped / per block         : ${(grouped.rate / single.rate).toFixed(2)}`);
  console.log(`grouped / one thread        : ${(grouped.rate / oneThread.rate).toFixed(2)}`);
  console.log(`grouped / decode only       : ${(grouped.rate / decodeRate).toFixed(2)}   target: 100,000 events/s`);
}

await main();
