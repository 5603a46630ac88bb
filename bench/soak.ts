/**
 * npm run soak (not in CI): the real server under a steady 80% of the load
 * it can take, for 5 minutes, while it ingests: 0 errors, and its memory
 * flat.
 *
 * 1. A simulated network (src/simulate) is written to an event file as it
 *    goes: a base of blocks at once (10,000, ~500,000 orders), which `serve
 *    --source file://... --follow` catches up with, then one block every
 *    1/bps s for the rest of the run, so that blocks keep committing
 *    throughout. The base is larger than the embedded writer's page cache
 *    (256 MB), so that catching up fills it to its bound, and the soak starts
 *    --settle-seconds (150) after the catch-up ended, once the memory of its
 *    burst is handed back (BENCHMARKS.md, "Soak": a smaller base left the
 *    cache filling, by 55 MB over the next 10 minutes).
 * 2. The request mix: every filter shape of bench/shapes.ts (orders with
 *    each filter, their combination, bundles), pages of 10, 50, 100 and 1000,
 *    both orderings and directions, random cursors and repeated first pages.
 * 3. The maximum: as many requests as 16 connections get answered, for 20 s
 *    after 10 s of the same.
 * 4. The soak: 80% of that, evenly paced, for --seconds (300). Every 10 s one
 *    line: requests, p50/p99, errors, the server's RSS (VmRSS summed over
 *    `serve` and its HTTP processes), the last block queries saw.
 * 5. PASS when no request failed (a status outside 2xx/3xx, a timeout, a
 *    socket error), RSS at the end is within 10% of RSS at the end of the
 *    warm-up (the first minute, whose growth is caches and allocators
 *    filling), and ingestion never stopped; else FAIL, exit status 1.
 *
 * Usage: npm run soak [-- --seconds N] [--database-url URL | --postgres]
 *   [--blocks-per-second N] [--base-blocks N] [--connections N] [--load F]
 *   [--settle-seconds N]
 * or npm run soak -- --distinct-urls N [--connections N] [--ceiling-mb N]
 *   [--idle-streams N] [--serve-env KEY=VALUE ...]: the memory of serve --workers 2 under N distinct
 *   long URLs (./soak-urls.ts).
 * --database-url names a PostgreSQL server: the soak creates a database
 * lq_soak on it (dropping one left from an earlier run) and drops it at the
 * end. --postgres starts a throwaway server itself (the distribution's
 * build, else the embedded one), as the tests do.
 */
import { fork } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { INGEST_STATUS_PATH } from '../src/api/ingest-status-route.js';
import type { IngestStatus } from '../src/domain/ingest-status.js';
import { encodeBusEvent } from '../src/ingest/codec.js';
import { encodeRecord } from '../src/ingest/framing.js';
import { simulateEvents } from '../src/simulate/simulate.js';
import { openStore } from '../src/store/open.js';
import type { StoreConfig } from '../src/store/store.js';
import { distributionBuilds, embeddedBuilds, startPostgres, type RunningPostgres } from '../test/support/pg-server.js';
import { BENCH_DATA } from './dataset.js';
import { processRss, processTree, startProcess, type RunningServer, type Rss } from './load.js';
import { casePaths, chooseShapes, cursorPool, shuffled, type Case, type Shape } from './shapes.js';
import type { ClientCounts, ClientJob, ClientMessage } from './soak-client.js';
import { urlSoak } from './soak-urls.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('./soak-client.js', import.meta.url));
const WINDOW_SECONDS = 10;
/** The maximum is measured over 20 s, after 10 s of the same load that warm the server's caches and the OS's page cache. */
const MAX_SECONDS = 20;
const MAX_WARM_SECONDS = 10;
const CURSORS_PER_SHAPE = 100;
const SEED = 25;
const ORDERS_PER_BLOCK = 50;
const SOAK_DATABASE = 'lq_soak';

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');
const log = (msg: string) => process.stdout.write(`${msg}\n`);

/** A simulated network appended to `file` block by block, as the core writes its event file: a base at once, then at a pace. */
class SimulatedNetwork {
  private readonly events;
  private fd: number | undefined;
  private seq = 0n;
  private pacer: NodeJS.Timeout | undefined;
  /** Height of the last block written whole. */
  height = 0;

  constructor(readonly file: string, blocks: number) {
    this.events = simulateEvents({ seed: SEED, blocks, ordersPerBlock: ORDERS_PER_BLOCK });
    this.fd = openSync(file, 'w');
  }

  /** The next block's records, or undefined when the simulation has ended. */
  private nextBlock(): Buffer[] | undefined {
    const records: Buffer[] = [];
    for (;;) {
      const next = this.events.next();
      if (next.done === true) return undefined;
      records.push(encodeRecord(this.seq++, encodeBusEvent(next.value)));
      if (next.value.kind === 'endBlock') {
        this.height = Number(next.value.height);
        return records;
      }
    }
  }

  /** `count` blocks, every write ending at the end of a block, as the core writes them. */
  write(count: number): void {
    let pending: Buffer[] = [];
    let bytes = 0;
    for (let i = 0; i < count; i++) {
      const block = this.nextBlock();
      if (block === undefined) throw new Error('the simulation ran out of blocks: raise its length');
      pending.push(...block);
      bytes += block.reduce((n, r) => n + r.length, 0);
      if (bytes >= 8 << 20 || i === count - 1) {
        writeSync(this.fd!, Buffer.concat(pending));
        pending = [];
        bytes = 0;
      }
    }
  }

  /** From now on, a block every 1/perSecond s. */
  pace(perSecond: number): void {
    const started = performance.now();
    let written = 0;
    this.pacer = setInterval(() => {
      const due = Math.floor(((performance.now() - started) / 1000) * perSecond);
      if (due > written) this.write(due - written);
      written = due;
    }, 50);
  }

  close(): void {
    clearInterval(this.pacer);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

async function ingestStatus(origin: string): Promise<IngestStatus> {
  return await (await fetch(origin + INGEST_STATUS_PATH)).json() as IngestStatus;
}

const heightOf = (s: IngestStatus) => Number(s.lastBlock?.height ?? 0);

/** Waits until the server has stored `height`; fails if its ingestion does. */
async function caughtUp(origin: string, height: number): Promise<IngestStatus> {
  const until = Date.now() + 30 * 60_000;
  for (;;) {
    const s = await ingestStatus(origin);
    if (s.state === 'failed' || s.state === 'stopped') throw new Error(`ingestion ${s.state}: ${s.error ?? ''}`);
    if (heightOf(s) >= height) return s;
    if (Date.now() > until) throw new Error(`ingestion reached height ${heightOf(s)} of ${height} in 30 minutes`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The request mix: for each shape, one path per cursor of its pool, the
 * cursors taking turns at the variants below (a page of 1000 one time in 20,
 * a fifth of the mix's time: BENCHMARKS.md, "Soak"), shuffled together.
 */
async function requestMix(config: StoreConfig): Promise<{ paths: string[]; shapes: Shape[] }> {
  const store = await openStore(config, { readOnly: true });
  try {
    const shapes = await chooseShapes(store);
    const base = { newestFirst: true, backward: false, pageSize: 50, cursors: 'random', gzip: false } as const;
    const variants: Omit<Case, 'shape'>[] = [
      base,
      { ...base, backward: true },
      { ...base, newestFirst: false, pageSize: 10 },
      { ...base, newestFirst: false, backward: true, pageSize: 100 },
      { ...base, cursors: 'first' },
    ];
    const paths: string[] = [];
    for (const shape of shapes) {
      const pool = await cursorPool(store, shape, CURSORS_PER_SHAPE);
      pool.forEach((cursor, i) => {
        const variant = i % 20 === 0 ? { ...base, pageSize: 1000 } : variants[i % variants.length]!;
        paths.push(casePaths({ ...variant, shape }, [cursor])[0]!);
      });
    }
    return { paths: shuffled(paths), shapes };
  } finally {
    await store.close();
  }
}

/** The client in its own process; `onWindow` sees each window as it ends. */
function runClient(job: ClientJob, onWindow: (c: ClientCounts) => void): Promise<ClientCounts> {
  const child = fork(CLIENT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let done: ClientCounts | undefined;
    child.on('message', (m: ClientMessage) => {
      if (m.type === 'window') onWindow(m.counts);
      else done = m.counts;
    });
    child.once('exit', (code) => (done ? resolve(done) : reject(new Error(`the load client exited ${code} without a result`))));
    child.send(job);
  });
}

const errorsOf = (c: ClientCounts) => c.badStatus + c.timeouts + c.socketErrors;

interface Sample {
  at: number;
  counts: ClientCounts;
  /** Summed over the server's processes. */
  rss: Rss;
  /** Each process's, serve first, then its HTTP processes. */
  each: Rss[];
  height: number;
  state: string;
  /** The machine's load average over the last minute: other work on a shared machine shows here. */
  load: number;
}

/** The server's memory, summed and per process. */
function serverMemory(pid: number): { rss: Rss; each: Rss[] } {
  const each = processTree(pid).map(processRss);
  const rss = each.reduce((a, r) => ({ total: a.total + r.total, anon: a.anon + r.anon, pss: a.pss + r.pss }), { total: 0, anon: 0, pss: 0 });
  return { rss, each };
}

function sampleLine(s: Sample, previousHeight: number): string {
  const c = s.counts;
  return `t=${fmt(s.at).padStart(4)} s  ${fmt(c.requests / c.seconds).padStart(6)} req/s  p50 ${fmt(c.p50, 2).padStart(6)} ms  ` +
    `p99 ${fmt(c.p99, 2).padStart(7)} ms  max ${fmt(c.max, 0).padStart(5)} ms  errors ${errorsOf(c)}  ` +
    `RSS ${fmt(s.rss.total).padStart(4)} MB = ${s.each.map((m) => fmt(m.total)).join(' + ')} (anon ${s.each.map((m) => fmt(m.anon)).join(' + ')}; PSS ${fmt(s.rss.pss)})  ` +
    `stored height ${fmt(s.height)} (+${fmt(s.height - previousHeight)}, ingestion ${s.state})  load ${s.load.toFixed(1)}`;
}

async function freshDatabase(serverUrl: string): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${SOAK_DATABASE} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${SOAK_DATABASE}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${SOAK_DATABASE}`;
  return url.toString();
}

async function dropDatabase(serverUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${SOAK_DATABASE} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

async function main(): Promise<boolean> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '300' },
      'database-url': { type: 'string' },
      postgres: { type: 'boolean', default: false },
      'blocks-per-second': { type: 'string', default: '1' },
      'base-blocks': { type: 'string', default: '10000' },
      connections: { type: 'string', default: '16' },
      load: { type: 'string', default: '0.8' },
      'settle-seconds': { type: 'string', default: '150' },
      'distinct-urls': { type: 'string' },
      'ceiling-mb': { type: 'string', default: '200' },
      'idle-streams': { type: 'string', default: '50' },
      'serve-env': { type: 'string', multiple: true, default: [] },
    },
  });
  if (values['distinct-urls'] !== undefined) {
    return urlSoak({
      urls: Number(values['distinct-urls']), connections: Number(values.connections), sampleEvery: 5000,
      ceilingMb: Number(values['ceiling-mb']), idleStreams: Number(values['idle-streams']),
      env: Object.fromEntries(values['serve-env'].map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
    });
  }
  const seconds = Number(values.seconds);
  const bps = Number(values['blocks-per-second']);
  const baseBlocks = Number(values['base-blocks']);
  const connections = Number(values.connections);
  const load = Number(values.load);
  const settleSeconds = Number(values['settle-seconds']);
  const warmup = Math.min(60, Math.floor(seconds / 3));
  const dir = join(BENCH_DATA, `soak-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  let postgres: RunningPostgres | undefined;
  let server: RunningServer | undefined;
  let network: SimulatedNetwork | undefined;
  let serverUrl = values['database-url'];
  try {
    if (values.postgres) {
      const build = distributionBuilds()[0] ?? embeddedBuilds()[0];
      if (build === undefined) throw new Error('no PostgreSQL server binaries on this machine: give --database-url');
      postgres = await startPostgres(build);
      serverUrl = postgres.url;
    }
    const config: StoreConfig = { dataDir: join(dir, 'store') };
    if (serverUrl !== undefined) config.databaseUrl = await freshDatabase(serverUrl);
    const backend = postgres ? postgres.version.split(' on ')[0]! : serverUrl !== undefined ? 'PostgreSQL (--database-url)' : 'embedded (SQLite)';

    // Enough blocks for the base, the measurements and a margin; the simulation makes them as they are written.
    network = new SimulatedNetwork(join(dir, 'net.events'), baseBlocks + Math.ceil(bps * (settleSeconds + seconds + 600)));
    network.write(baseBlocks);
    const storeArgs = config.databaseUrl ? ['--database-url', config.databaseUrl] : ['--data-dir', config.dataDir];
    const source = `file://${network.file}`;
    server = await startProcess([CLI, 'serve', ...storeArgs, '--port', '0', '--source', source, '--follow'], '/health');
    log(`soak of ${backend}: serve (default settings, ${availableParallelism()} cores) at ${server.url}, ingesting ${source} --follow`);
    const catchUpStarted = Date.now();
    const base = await caughtUp(server.url, network.height);
    const caughtUpAt = Date.now();
    log(`base: ${fmt(baseBlocks)} blocks (~${fmt(baseBlocks * ORDERS_PER_BLOCK)} orders, ${fmt(base.events)} events) ingested by the server ` +
      `in ${fmt((caughtUpAt - catchUpStarted) / 1000, 1)} s`);
    network.pace(bps);
    log(`ingestion from now on: the simulated network goes on, ${bps} block/s of ~${ORDERS_PER_BLOCK} new orders each (plus their updates), ` +
      'appended to the file the server tails');

    const { paths, shapes } = await requestMix(config);
    log(`request mix: ${fmt(paths.length)} paths over ${shapes.length} shapes (${shapes.map((s) => s.name).join(', ')}), ` +
      'pages of 10/50/100 (1000 one time in 20), both orderings and directions, random cursors and first pages');

    const job = { origin: server.url, paths, connections, windowSeconds: WINDOW_SECONDS };
    log(`measuring the maximum: ${connections} connections, as fast as answered, ${MAX_SECONDS} s after ${MAX_WARM_SECONDS} s of the same`);
    const maxWindows: ClientCounts[] = [];
    const max = await runClient({ ...job, seconds: MAX_WARM_SECONDS + MAX_SECONDS }, (c) => { if (c.at > MAX_WARM_SECONDS + 1) maxWindows.push(c); });
    const maxRate = maxWindows.reduce((n, c) => n + c.requests, 0) / maxWindows.reduce((n, c) => n + c.seconds, 0);
    log(`maximum: ${fmt(maxRate)} req/s (p99 ${maxWindows.map((c) => fmt(c.p99, 2)).join(', ')} ms; errors ${errorsOf(max)}, warm-up included)`);

    const settleUntil = caughtUpAt + settleSeconds * 1000;
    if (Date.now() < settleUntil) {
      log(`settling: the soak starts ${settleSeconds} s after the catch-up ended, while blocks keep coming ` +
        '(catching up with a store larger than the embedded writer\'s 256 MB page cache fills that cache to its bound, the steady state; ' +
        'memory the burst held is handed back over the next 1-2 minutes: BENCHMARKS.md, "Soak")');
      await new Promise((r) => setTimeout(r, settleUntil - Date.now()));
    }

    const rate = Math.max(1, Math.round(maxRate * load));
    log(`soak: ${fmt(rate)} req/s (${load * 100}% of the maximum), evenly paced over up to ${connections} connections, ${seconds} s; ` +
      `a line every ${WINDOW_SECONDS} s; RSS is VmRSS summed over serve and its HTTP processes` +
      `${config.databaseUrl ? ' (the PostgreSQL server not included)' : ''}`);
    const samples: Sample[] = [];
    let lastHeight = heightOf(await ingestStatus(server.url));
    const startHeight = lastHeight;
    const pending: Promise<void>[] = [];
    const total = await runClient({ ...job, seconds, rate }, (counts) => {
      const memory = serverMemory(server!.pid);
      pending.push(ingestStatus(server!.url).then((s) => {
        const sample = { at: counts.at, counts, ...memory, height: heightOf(s), state: s.state, load: loadavg()[0]! };
        samples.push(sample);
        log(sampleLine(sample, lastHeight));
        lastHeight = sample.height;
      }));
    });
    await Promise.all(pending);
    const end = await ingestStatus(server.url);
    network.close();

    // The verdict.
    const errors = errorsOf(total);
    const steady = samples.filter((s) => s.at >= warmup);
    const first = steady[0];
    const last = steady.at(-1);
    const ratio = first && last ? last.rss.total / first.rss.total : NaN;
    const flat = Math.abs(ratio - 1) <= 0.1;
    const p99s = samples.map((s) => s.counts.p99);
    // A last window cut short may end before the next block: only windows of 5 s or more are asked for one.
    const stalled = samples.filter((s, i) => s.counts.seconds >= WINDOW_SECONDS / 2 && s.height <= (i === 0 ? startHeight : samples[i - 1]!.height));
    const ingesting = end.state === 'running' && stalled.length === 0;
    log('');
    log(`summary (${backend}, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}):`);
    log(`- rate: ${fmt(total.requests / total.seconds)} req/s achieved of ${fmt(rate)} asked (${load * 100}% of ${fmt(maxRate)}), ${fmt(total.requests)} requests in ${fmt(total.seconds)} s`);
    log(`- errors: ${errors} (statuses outside 2xx/3xx ${total.badStatus}${total.badStatus ? ` ${JSON.stringify(total.statuses)}` : ''}, ` +
      `timeouts ${total.timeouts}, socket errors ${total.socketErrors})${total.samples.length ? `: ${total.samples.join('; ')}` : ''}`);
    log(`- latency: p50 ${fmt(total.p50, 2)} ms, p99 ${fmt(total.p99, 2)} ms, max ${fmt(total.max)} ms over the run; ` +
      `p99 per ${WINDOW_SECONDS} s window ${fmt(Math.min(...p99s), 2)}-${fmt(Math.max(...p99s), 2)} ms`);
    log(`- RSS: ${first ? `${fmt(first.rss.total)} MB at t=${fmt(first.at)} s (the first sample at or after the ${warmup} s warm-up; growth before it is not judged), ` +
      `${fmt(last!.rss.total)} MB at the end: ratio ${ratio.toFixed(3)}; after warm-up ${fmt(Math.min(...steady.map((s) => s.rss.total)))}-` +
      `${fmt(Math.max(...steady.map((s) => s.rss.total)))} MB (anon ${fmt(first.rss.anon)} -> ${fmt(last!.rss.anon)} MB); ` +
      `per process (serve, then its HTTP processes) ${first.each.map((r) => fmt(r.total)).join(' + ')} -> ${last!.each.map((r) => fmt(r.total)).join(' + ')} MB, ` +
      `anon ${first.each.map((r) => fmt(r.anon)).join(' + ')} -> ${last!.each.map((r) => fmt(r.anon)).join(' + ')} MB` : 'no sample after the warm-up'}`);
    log(`- ingestion: height ${fmt(startHeight)} -> ${fmt(heightOf(end))} during the soak (${fmt(heightOf(end) - startHeight)} blocks), ` +
      `state ${end.state}${end.error ? ` (${end.error})` : ''}${stalled.length ? `, no new block in ${stalled.length} window(s)` : ''}`);
    const pass = errors === 0 && flat && ingesting;
    log(`${pass ? 'PASS' : 'FAIL'}: ${errors === 0 ? '0 errors' : `${errors} errors`}, RSS ${flat ? 'flat' : 'NOT flat'} within 10% after the warm-up ` +
      `(${ratio.toFixed(3)}), ingestion ${ingesting ? 'committed blocks in every window' : 'stalled or stopped'}`);
    return pass;
  } finally {
    network?.close();
    await server?.stop();
    if (serverUrl !== undefined && postgres === undefined) await dropDatabase(serverUrl).catch(() => undefined);
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = (await main()) ? 0 : 1;
