/**
 * Ingestion benchmark: events/s for a simulated file of >= 1M order events into
 * a fresh embedded store, beside the rate of reading and decoding the same file
 * without storing it (the ceiling the store is measured against), same run.
 * Usage: npm run bench:ingest
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileSource } from '../src/ingest/file-source.js';
import { ingest } from '../src/ingest/ingester.js';
import { openStore } from '../src/store/open.js';
import { eventFile } from './dataset.js';

async function main() {
  const { file, dir, summary } = await eventFile({ name: 'ingest-1m', seed: 7, blocks: 10_000, ordersPerBlock: 40 });
  if (summary.orderEvents < 1_000_000) throw new Error(`only ${summary.orderEvents} order events; raise blocks`);

  let t = performance.now();
  let decoded = 0;
  for await (const batch of fileSource(file).events()) decoded += batch.events.length;
  const decodeSecs = (performance.now() - t) / 1000;

  const dataDir = join(dir, 'ingest-store');
  rmSync(dataDir, { recursive: true, force: true });
  const store = openStore({ dataDir });
  t = performance.now();
  const stats = await ingest(fileSource(file), store);
  const ingestSecs = (performance.now() - t) / 1000;
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });

  const decodeRate = decoded / decodeSecs;
  const ingestRate = stats.events / ingestSecs;
  console.log(`file: ${summary.events} events (${summary.orderEvents} order events, ${summary.orders} orders) in ${summary.blocks} blocks`);
  console.log(`read + decode only : ${Math.round(decodeRate).toLocaleString('en-US')} events/s (${decodeSecs.toFixed(1)} s)`);
  console.log(`ingest into SQLite : ${Math.round(ingestRate).toLocaleString('en-US')} events/s (${ingestSecs.toFixed(1)} s, ${stats.blocksCommitted} blocks)`);
  console.log(`ingest / decode    : ${(ingestRate / decodeRate).toFixed(2)}   target: 100,000 events/s`);
}

await main();
