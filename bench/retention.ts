/**
 * Retention benchmark (`npm run bench:retention`; BENCHMARKS.md, "Retention"):
 *
 * Windowed (the default): a simulated network at a realistic rate (a block
 * a second of network time, --orders-per-block new orders a block, ~3.5
 * changes each, with bursts of 5x for 30 blocks in every 600) ingested as
 * fast as it goes with --retention WINDOW, through --windows windows, on
 * each backend. At each window's end it stops to measure: the store's
 * bytes, page-50 p99 uncached (the store's own reads, no answer cache) for
 * three filter shapes from random cursors, the events/s of the window, the
 * longest prune batch (commit included); then hands over --live-blocks
 * blocks paced as a live network sends them (--pace-ms apart) and measures
 * each one's commit delay. The same live sample in the middle of the first
 * window, before anything is older than the window, is the delay without
 * pruning.
 *
 * Archive (--archive): the simulated network's events straight from the
 * simulator (no file: 30M versions would be ~13 GB of events), kept whole,
 * to --versions order versions, with ingest rate, page p99 and bytes at
 * every --every; it stops early where the disk would keep less than 15 GB
 * free, and says so.
 *
 * --backends embedded,postgres (PostgreSQL: a throwaway server of the
 * distribution's build, or the embedded 18 where there is none;
 * --autovacuum-naptime sets how often its autovacuum wakes: a window of
 * network time passes here in seconds, against the minute it waits by
 * default).
 */
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseRetention, type Retention } from '../src/domain/retention.js';
import { fileSource } from '../src/ingest/file-source.js';
import { ingest } from '../src/ingest/ingester.js';
import type { EventSource } from '../src/ingest/source.js';
import { writeEventFile } from '../src/simulate/write.js';
import { openStore, openWriter } from '../src/store/open.js';
import type { QueryStore, StoreConfig, WriteStore } from '../src/store/store.js';
import { distributionBuilds, embeddedBuilds, startPostgres } from '../test/support/pg-server.js';
import { BENCH_DATA } from './dataset.js';
import { pageP99s, type ShapeP99 } from './retention-pages.js';
import { postgresSizes } from './retention-sizes.js';
import { blockByBlock, simulatedSource } from './retention-source.js';

const { values: args } = parseArgs({
  options: {
    window: { type: 'string', default: '3h' },
    windows: { type: 'string', default: '6' },
    'orders-per-block': { type: 'string', default: '15' },
    backends: { type: 'string', default: 'embedded,postgres' },
    'live-blocks': { type: 'string', default: '120' },
    'pace-ms': { type: 'string', default: '100' },
    /** Pages a shape: the p99 of 300 was the third-worst page, and moved 3-4x between runs of the same window. */
    pages: { type: 'string', default: '2000' },
    archive: { type: 'boolean', default: false },
    versions: { type: 'string', default: '30000000' },
    every: { type: 'string', default: '5000000' },
    /** The PostgreSQL server's autovacuum_naptime (its default: 1min). */
    'autovacuum-naptime': { type: 'string' },
  },
});

const MIN_FREE_BYTES = 15 * 2 ** 30;
const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`);
const p99 = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!);
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

function freeBytes(): number {
  const out = execFileSync('df', ['-B1', '--output=avail', BENCH_DATA], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  return Number(out);
}

interface Backend { name: string; config: StoreConfig; done(): Promise<void> }

/** Each backend in turn, started when its turn comes (a server stops when the benchmark is interrupted). */
async function* backendsOf(names: string[], label: string): AsyncGenerator<Backend> {
  for (const name of names) {
    if (name === 'embedded') {
      const dataDir = join(BENCH_DATA, `retention-${label}-embedded`);
      rmSync(dataDir, { recursive: true, force: true });
      yield { name, config: { dataDir }, done: async () => rmSync(dataDir, { recursive: true, force: true }) };
    } else {
      const build = distributionBuilds()[0] ?? embeddedBuilds()[0]!;
      const naptime = args['autovacuum-naptime'];
      const server = await startPostgres(build, {
        settings: { shared_buffers: '512MB', max_wal_size: '4GB', ...(naptime !== undefined && { autovacuum_naptime: naptime }) },
      });
      const stop = () => void server.stop().finally(() => process.exit(130));
      process.once('SIGINT', stop).once('SIGTERM', stop);
      yield {
        name: `postgres ${build.id}`, config: { dataDir: BENCH_DATA, databaseUrl: server.url },
        done: async () => {
          process.off('SIGINT', stop).off('SIGTERM', stop);
          await server.stop();
        },
      };
    }
  }
}

/**
 * Writes the embedded store's WAL back into its file and empties it, so
 * that the bytes measured are the store's, not the WAL's (up to 400 MB
 * between checkpoints): the writer is idle while the benchmark measures.
 */
function checkpoint(config: StoreConfig): void {
  if (config.databaseUrl !== undefined) return;
  const db = new Database(join(config.dataDir, 'ledger.db'));
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Waits until the store holds block `height` (the writer commits what waits once the source pauses). */
async function stored(reader: QueryStore, height: bigint): Promise<void> {
  while (((await reader.lastBlock())?.height ?? 0n) < height) await new Promise((r) => setTimeout(r, 5));
}

interface WindowRow {
  window: number;
  bytes: number;
  eventsPerSecond: number;
  pages: ShapeP99;
  longestBatchMs: number;
  longestBatchCpuMs: number;
  batchP99Ms: number;
  batches: number;
  pruneMs: number;
  rowsPruned: number;
  liveP99Ms: number;
}

async function windowed(backend: Backend, file: string, windowBlocks: number, windows: number, retention: Retention): Promise<{ rows: WindowRow[]; withoutP99: number }> {
  const live = Number(args['live-blocks']);
  const pace = Number(args['pace-ms']);
  const fresh = () => ({ events: 0, ms: 0, longestBatchMs: 0, longestBatchCpuMs: 0, pruneMs: 0, rowsPruned: 0, batches: [] as number[] });
  let current = fresh();
  const writer: WriteStore = await openWriter(backend.config, {
    retention,
    onPruned: (rows, ms, cpuMs) => {
      current.longestBatchMs = Math.max(current.longestBatchMs, ms);
      current.longestBatchCpuMs = Math.max(current.longestBatchCpuMs, cpuMs);
      current.batches.push(ms);
      current.pruneMs += ms;
      current.rowsPruned += rows;
      if (ms > 100) log(`${backend.name}: a prune batch of ${rows} rows took ${ms.toFixed(0)} ms (${cpuMs.toFixed(0)} ms of the writer thread's CPU)`);
    },
  });
  const reader = await openStore(backend.config, { readOnly: true });
  const rows: WindowRow[] = [];
  let segmentStart = performance.now();
  let paced: { until: bigint; delays: number[] } | undefined;
  const handedAt = new Map<bigint, number>();
  let withoutP99 = NaN;
  const boundary = (k: number) => BigInt(k * windowBlocks + 1);
  const endFast = () => { current.ms += performance.now() - segmentStart; };
  const source: EventSource = blockByBlock(fileSource(file), {
    async before(height) {
      if (paced !== undefined && height === paced.until) {
        await stored(reader, height - 1n);
        if (rows.length === 0 && Number.isNaN(withoutP99)) withoutP99 = p99(paced.delays);
        else rows.at(-1)!.liveP99Ms = p99(paced.delays);
        paced = undefined;
        segmentStart = performance.now();
      }
      if (paced !== undefined) return pace;
      const mid = BigInt(Math.floor(windowBlocks / 2));
      const k = Number((height - 1n) / BigInt(windowBlocks));
      if (height === mid || (height === boundary(k) && k >= 1)) {
        await stored(reader, height - 1n);
        endFast();
        if (height !== mid) {
          await writer.prune();
          checkpoint(backend.config);
          const status = await reader.retentionStatus!();
          const pages = await pageP99s(reader, Number(args.pages));
          rows.push({
            window: k, bytes: status.storeBytes, eventsPerSecond: current.events / (current.ms / 1000), pages,
            longestBatchMs: current.longestBatchMs, longestBatchCpuMs: current.longestBatchCpuMs, batchP99Ms: p99(current.batches),
            batches: current.batches.length, pruneMs: current.pruneMs, rowsPruned: current.rowsPruned, liveP99Ms: NaN,
          });
          log(`${backend.name}: window ${k}: ${mb(status.storeBytes)} MB, ${Math.round(current.events / (current.ms / 1000))} events/s, ` +
            `pages p99 ${JSON.stringify(pages)}, ${current.batches.length} prune batches, p99 ${fmt(p99(current.batches))} ms, ` +
            `longest ${current.longestBatchMs.toFixed(1)} ms (${current.longestBatchCpuMs.toFixed(1)} ms CPU)`);
          if (backend.config.databaseUrl !== undefined) log(`${backend.name}: window ${k}: ${await postgresSizes(backend.config.databaseUrl)}`);
          current = fresh();
        }
        paced = { until: height + BigInt(live), delays: [] };
        return pace;
      }
    },
    handed(height, events) {
      if (paced !== undefined) handedAt.set(height, performance.now());
      else current.events += events;
    },
  });
  await ingest(source, writer, {
    onBlock: (block) => {
      const at = handedAt.get(block.height);
      if (at !== undefined && paced !== undefined) {
        paced.delays.push(performance.now() - at);
        handedAt.delete(block.height);
      }
    },
  });
  // The file ends with the last window's live sample.
  const last = rows.at(-1);
  if (paced !== undefined && last !== undefined) last.liveP99Ms = p99(paced.delays);
  await writer.close();
  await reader.close();
  return { rows, withoutP99 };
}

interface ArchiveRow { versions: number; eventsPerSecond: number; pages: ShapeP99; bytes: number }

async function archive(backend: Backend, target: number, every: number): Promise<{ rows: ArchiveRow[]; stopped?: string }> {
  const writer = await openWriter(backend.config);
  const reader = await openStore(backend.config, { readOnly: true });
  const rows: ArchiveRow[] = [];
  let versions = 0;
  let events = 0;
  let next = every;
  let start = performance.now();
  let stopped: string | undefined;
  const abort = new AbortController();
  const source = blockByBlock(simulatedSource({ seed: 11, blocks: 10_000_000, ordersPerBlock: 30 }), {
    async before(height) {
      if (versions < next) return;
      await stored(reader, height - 1n);
      const ms = performance.now() - start;
      const status = await reader.retentionStatus!();
      const pages = await pageP99s(reader, Number(args.pages));
      rows.push({ versions, eventsPerSecond: events / (ms / 1000), pages, bytes: status.storeBytes });
      log(`${backend.name}: ${versions} versions, ${Math.round(events / (ms / 1000))} events/s, pages p99 ${JSON.stringify(pages)}, ${mb(status.storeBytes)} MB`);
      const free = freeBytes();
      if (versions >= target) abort.abort();
      else if (free - (status.storeBytes / versions) * every < MIN_FREE_BYTES) {
        stopped = `stopped at ${versions} versions: ${mb(free)} MB free, and ${every} more would leave under 15 GB`;
        log(stopped);
        abort.abort();
      }
      next += every;
      events = 0;
      start = performance.now();
    },
    handed(_height, n, orders) {
      events += n;
      versions += orders;
    },
  });
  await ingest(source, writer, {}, abort.signal);
  await writer.close();
  await reader.close();
  return { rows, ...(stopped !== undefined && { stopped }) };
}

/** The windowed run's event file, simulated once into bench/data and kept while its parameters match. */
async function eventFileOf(windowBlocks: number, windows: number, ordersPerBlock: number): Promise<string> {
  const blocks = windowBlocks * windows + Number(args['live-blocks']) + 1;
  const dir = join(BENCH_DATA, `retention-${windowBlocks}x${windows}-${ordersPerBlock}`);
  const file = join(dir, 'net.events');
  if (existsSync(join(dir, 'done'))) return file;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`simulating ${blocks} blocks, ~${ordersPerBlock} new orders a block with bursts, into ${file}`);
  await writeEventFile(file, { seed: 7, blocks, ordersPerBlock, bursts: { every: 600, blocks: 30, factor: 5 } });
  writeFileSync(join(dir, 'done'), '');
  return file;
}

const fmt = (x: number, digits = 1) => (Number.isNaN(x) ? '-' : x.toFixed(digits));

async function main(): Promise<void> {
  const names = args.backends!.split(',');
  const out: string[] = [];
  if (args.archive) {
    const target = Number(args.versions);
    for await (const backend of backendsOf(names, 'archive')) {
      try {
        log(`${backend.name}: archive to ${target} order versions`);
        const { rows, stopped } = await archive(backend, target, Number(args.every));
        out.push(`#### ${backend.name}: archive${stopped === undefined ? '' : ` (${stopped})`}`, '',
          '| order versions | events/s | page-50 p99 ms (all / market / party) | store MB | bytes per version |', '|---|---|---|---|---|',
          ...rows.map((r) => `| ${r.versions} | ${Math.round(r.eventsPerSecond)} | ${fmt(r.pages.all)} / ${fmt(r.pages.market)} / ${fmt(r.pages.party)} | ${mb(r.bytes)} | ${Math.round(r.bytes / r.versions)} |`), '');
      } finally {
        await backend.done();
      }
    }
  } else {
    const retention = parseRetention(args.window!);
    if (retention === undefined || retention.kind !== 'window') throw new Error(`--window: not a window: ${args.window}`);
    const windowBlocks = Number(retention.ns / 1_000_000_000n);
    const windows = Number(args.windows);
    const file = await eventFileOf(windowBlocks, windows, Number(args['orders-per-block']));
    for await (const backend of backendsOf(names, 'windowed')) {
      try {
        log(`${backend.name}: ${windows} windows of ${args.window}`);
        const { rows, withoutP99 } = await windowed(backend, file, windowBlocks, windows, retention);
        out.push(`#### ${backend.name}: --retention ${args.window}, ${windows} windows; live commit p99 without pruning (mid first window): ${fmt(withoutP99)} ms`, '',
          '| window | store MB | events/s | page-50 p99 ms (all / market / party) | prune batches | batch p99 ms | longest batch ms (its thread CPU ms) | pruning ms | rows pruned | live commit p99 ms |',
          '|---|---|---|---|---|---|---|---|---|---|',
          ...rows.map((r) => `| ${r.window} | ${mb(r.bytes)} | ${Math.round(r.eventsPerSecond)} | ${fmt(r.pages.all)} / ${fmt(r.pages.market)} / ${fmt(r.pages.party)} | ` +
            `${r.batches} | ${fmt(r.batchP99Ms)} | ${fmt(r.longestBatchMs)} (${fmt(r.longestBatchCpuMs)}) | ${Math.round(r.pruneMs)} | ${r.rowsPruned} | ${fmt(r.liveP99Ms)} |`), '');
      } finally {
        await backend.done();
      }
    }
  }
  const text = out.join('\n');
  process.stdout.write(`${text}\n`);
  mkdirSync(join(BENCH_DATA, '..', 'results'), { recursive: true });
  writeFileSync(join(BENCH_DATA, '..', 'results', `${new Date().toISOString().slice(0, 10)}-retention${args.archive ? '-archive' : ''}.md`), `${text}\n`);
}

await main();
