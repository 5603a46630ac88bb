/** Benchmark datasets: simulated once into bench/data, reused while their parameters match. */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileSource } from '../src/ingest/file-source.js';
import { ingest } from '../src/ingest/ingester.js';
import { writeEventFile } from '../src/simulate/write.js';
import type { SimulationSummary } from '../src/simulate/simulate.js';
import pg from 'pg';
import { openStore, openWriter } from '../src/store/open.js';
import { SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION, storedSchemaVersion } from '../src/store/postgres/schema.js';
import { SCHEMA_VERSION } from '../src/store/sqlite/schema.js';
import { PAGE_BYTES } from '../src/store/sqlite/database.js';

export const BENCH_DATA = fileURLToPath(new URL('../../bench/data/', import.meta.url));

export interface DatasetSpec {
  name: string;
  seed: number;
  blocks: number;
  ordersPerBlock: number;
}

export interface Dataset {
  file: string;
  dataDir: string;
  summary: SimulationSummary;
}

/**
 * Part of every dataset's cache key: bumped when the simulator's output
 * changes, so that a dataset cached by an earlier version is made again.
 * 2: events shaped like the real recording (block hashes, tx hashes, height 1 twice).
 */
const DATASET_FORMAT = 2;

function log(msg: string) {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

/** The event file of a spec, simulated if missing. */
export async function eventFile(spec: DatasetSpec): Promise<{ file: string; summary: SimulationSummary; dir: string }> {
  const dir = join(BENCH_DATA, spec.name);
  const file = join(dir, 'net.events');
  const meta = join(dir, 'spec.json');
  const wanted = JSON.stringify({ ...spec, format: DATASET_FORMAT });
  if (existsSync(meta) && JSON.parse(readFileSync(meta, 'utf8')).spec === wanted && existsSync(file)) {
    return { file, dir, summary: JSON.parse(readFileSync(meta, 'utf8')).summary };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`simulating ${spec.blocks} blocks x ~${spec.ordersPerBlock} new orders into ${file}`);
  const summary = await writeEventFile(file, spec);
  writeFileSync(meta, JSON.stringify({ spec: wanted, summary }));
  return { file, dir, summary };
}

/**
 * The event file plus a store with all of it ingested. A store written at
 * another schema version or page size is ingested again: migrated in place,
 * its file would keep the old layout, and sizes and rates are measured here.
 */
export async function ingestedDataset(spec: DatasetSpec): Promise<Dataset> {
  const { file, dir, summary } = await eventFile(spec);
  const dataDir = join(dir, 'store');
  const done = join(dir, 'ingested');
  const marker = `schema ${SCHEMA_VERSION}, pages ${PAGE_BYTES}`;
  if (!existsSync(done) || readFileSync(done, 'utf8') !== marker) {
    rmSync(dataDir, { recursive: true, force: true });
    log(`ingesting ${summary.events} events into ${dataDir}`);
    const writer = await openWriter({ dataDir });
    const started = Date.now();
    const stats = await ingest(fileSource(file), writer);
    await writer.close();
    log(`ingested ${stats.events} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    writeFileSync(done, marker);
  }
  return { file, dataDir, summary };
}

/**
 * The dataset's events ingested into a database of its own on the PostgreSQL
 * server `serverUrl` names (created if missing; ingested again unless it
 * holds the embedded store's last block). Returns the database's URL.
 */
export async function ingestedPostgres(ds: Dataset, spec: DatasetSpec, serverUrl: string): Promise<string> {
  const database = `lq_bench_${spec.name.replace(/\W/g, '_')}`;
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${database}`);
    // As for the embedded store: a database of another schema version is ingested again, not migrated.
    if ((await schemaVersionOf(url.toString())) === POSTGRES_SCHEMA_VERSION) {
      const embedded = await openStore({ dataDir: ds.dataDir }, { readOnly: true });
      const want = (await embedded.lastBlock())?.height;
      await embedded.close();
      const store = await openStore({ dataDir: ds.dataDir, databaseUrl: url.toString() });
      const have = (await store.lastBlock())?.height;
      await store.close();
      if (have === want) return url.toString();
    }
    // Another dataset's, another schema version's, or an ingest cut short: measured from scratch.
    await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  log(`ingesting ${ds.summary.events} events into PostgreSQL database ${database}`);
  const writer = await openWriter({ dataDir: ds.dataDir, databaseUrl: url.toString() });
  const started = Date.now();
  const stats = await ingest(fileSource(ds.file), writer);
  await writer.close();
  log(`ingested ${stats.events} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return url.toString();
}

/** The schema version a PostgreSQL database is at; 0 if it holds no ledger-query schema. */
async function schemaVersionOf(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await storedSchemaVersion(client)) ?? 0;
  } finally {
    await client.end();
  }
}
