/**
 * Ingestion benchmark: events/s for a simulated file of >= 1M order events into
 * a fresh embedded store, in one run beside
 *  - reading and decoding the same file without storing it (the ceiling the
 *    store is measured against), and
 *  - the same ingest committing every block on its own (what grouping saves).
 * With --database-url URL (or DATABASE_URL), the same file is ingested into
 * PostgreSQL too, into a database the benchmark creates and drops (the URL's
 * role needs CREATEDB), beside the embedded store's grouped ingest;
 * --postgres-only leaves the embedded store out.
 * Usage: npm run bench:ingest [-- --database-url postgres://... [--postgres-only]]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { CommitLimits } from '../src/ingest/pending-group.js';
import { fileSource } from '../src/ingest/file-source.js';
import { ingest } from '../src/ingest/ingester.js';
import { openWriter } from '../src/store/open.js';
import type { StoreConfig } from '../src/store/store.js';
import { displayUrl } from '../src/store/postgres/connection.js';
import { eventFile } from './dataset.js';

const rate = (n: number) => `${Math.round(n).toLocaleString('en-US')} events/s`;

interface Timed {
  rate: number;
  secs: number;
  blocks: number;
}

/**
 * Writes back what earlier runs left dirty in the page cache before a run
 * starts: otherwise the kernel flushes the previous store's pages during the
 * next run, and its commits' fsyncs wait behind them (PostgreSQL measured 25%
 * slower right after an embedded run than on its own).
 */
function flushDisks(): void {
  try {
    execFileSync('sync');
  } catch {
    // No sync command: figures may then carry the previous run's writes.
  }
}

async function timedIngest(file: string, config: StoreConfig, commit?: Partial<CommitLimits>): Promise<Timed> {
  flushDisks();
  const store = await openWriter(config);
  const t = performance.now();
  const stats = await ingest(fileSource(file), store, { commit });
  const secs = (performance.now() - t) / 1000;
  await store.close();
  return { rate: stats.events / secs, secs, blocks: stats.blocksCommitted };
}

async function embeddedIngest(file: string, dataDir: string, commit?: Partial<CommitLimits>): Promise<Timed> {
  rmSync(dataDir, { recursive: true, force: true });
  try {
    return await timedIngest(file, { dataDir }, commit);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function admin<T>(url: string, task: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await task(client);
  } finally {
    await client.end();
  }
}

/** The server's settings that decide the figure, printed beside it. */
async function serverSettings(url: string): Promise<string> {
  const names = ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'max_wal_size', 'wal_level'];
  return admin(url, async (c) => {
    const values: string[] = [];
    for (const name of names) values.push(`${name}=${(await c.query(`SHOW ${name}`)).rows[0][name]}`);
    return values.join(' ');
  });
}

/** Ingests into a database created for the run, and dropped after it. */
async function postgresIngest(file: string, url: string, dir: string): Promise<Timed> {
  const name = `lq_bench_${randomBytes(6).toString('hex')}`;
  await admin(url, (c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(url);
  u.pathname = `/${name}`;
  try {
    return await timedIngest(file, { dataDir: dir, databaseUrl: u.toString() });
  } finally {
    await admin(url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

async function main() {
  const databaseUrl = flag('--database-url') ?? process.env.DATABASE_URL;
  const postgresOnly = process.argv.includes('--postgres-only');
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
  if (databaseUrl === undefined) {
    const single = await embeddedIngest(file, dataDir, { maxBlocks: 1 });
    console.log(`ingest, a commit per block  : ${rate(single.rate)} (${single.secs.toFixed(1)} s, ${single.blocks} blocks)`);
    const grouped = await embeddedIngest(file, dataDir);
    console.log(`ingest, grouped commits     : ${rate(grouped.rate)} (${grouped.secs.toFixed(1)} s, ${grouped.blocks} blocks)  <- the figure`);
    console.log(`grouped / per block         : ${(grouped.rate / single.rate).toFixed(2)}`);
    console.log(`grouped / decode only       : ${(grouped.rate / decodeRate).toFixed(2)}   target: 150,000 events/s (issue 11)`);
    return;
  }

  console.log(`PostgreSQL: ${displayUrl(databaseUrl)}, ${await serverSettings(databaseUrl)}`);
  let embedded: Timed | undefined;
  if (!postgresOnly) {
    embedded = await embeddedIngest(file, dataDir);
    console.log(`embedded, grouped commits   : ${rate(embedded.rate)} (${embedded.secs.toFixed(1)} s, ${embedded.blocks} blocks)`);
  }
  const postgres = await postgresIngest(file, databaseUrl, dir);
  console.log(`PostgreSQL, grouped commits : ${rate(postgres.rate)} (${postgres.secs.toFixed(1)} s, ${postgres.blocks} blocks)  <- the figure`);
  if (embedded) console.log(`PostgreSQL / embedded       : ${(postgres.rate / embedded.rate).toFixed(2)}`);
  console.log(`PostgreSQL / decode only    : ${(postgres.rate / decodeRate).toFixed(2)}   target: 50,000 events/s`);
}

await main();
