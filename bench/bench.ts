/**
 * npm run bench: the real server (`ledger-query serve`, default settings, its
 * own process) driven by wrk (16 connections, another process) for every query
 * shape, beside the same queries straight on the store in this process (one
 * at a time) and a static server answering the very same bytes (the
 * transport limit). Writes a markdown table to bench/results/ and prints it.
 *
 * Usage: npm run bench [-- --sizes small,1m,10m] [--database-url postgres://...]
 * Environment: BENCH_SIZES, DATABASE_URL, BENCH_SECONDS (5 per measurement),
 * BENCH_CONNECTIONS (16), BENCH_CURSORS (400 pages per random-cursor case),
 * BENCH_WIDE_CURSORS (4000), BENCH_WRK_THREADS (1), BENCH_ONLY (a regular
 * expression: only the cases whose table cells, joined by spaces, match it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { bundleCursors, orderCursors } from '../src/api/cursor.js';
import { readBundleFilter, readOrderFilter, readPagination } from '../src/api/read-parameters.js';
import { readQuery } from '../src/api/query.js';
import { openStore,  } from '../src/store/open.js';
import type { StoreConfig } from '../src/store/store.js';
import type { QueryStore } from '../src/store/store.js';
import { BENCH_DATA, ingestedDataset, ingestedPostgres, type DatasetSpec } from './dataset.js';
import { capture, checkWrk, startProcess, treeRss, wrk, type LoadOptions, type Measure, type Rss, type RunningServer } from './load.js';
import { BUNDLES, casePaths, chooseShapes, cursorPool, describeCase, matrix, ORDER, ORDERS, type Case, type Shape } from './shapes.js';
import { READY_PATH, writeManifest } from './static-server.js';

const SIZES: Record<string, DatasetSpec> = {
  small: { name: 'bench-small', seed: 42, blocks: 1_000, ordersPerBlock: 50 },
  '1m': { name: 'bench-1m', seed: 42, blocks: 20_000, ordersPerBlock: 50 },
  '10m': { name: 'bench-10m', seed: 42, blocks: 200_000, ordersPerBlock: 50 },
};

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/**
 * The same load before a case's measurement, so that each worker's answer
 * cache holds what it can of the case's pages (each worker keeps its own): a
 * first pass of misses (two per page) inside the measurement made its p99.
 */
const SERVER_WARM_SECONDS = 2;
const POOL = Number(process.env.BENCH_CURSORS ?? 400);
/** Pages of 50 rows take 34-45 KB: 4000 of them are six times the server's default 24 MB answer cache. */
const WIDE_POOL = Number(process.env.BENCH_WIDE_CURSORS ?? 4000);
const LOAD = {
  seconds: SECONDS,
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  threads: Number(process.env.BENCH_WRK_THREADS ?? 1),
};
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const STATIC_SERVER = fileURLToPath(new URL('./static-server.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));

function log(msg: string): void {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

function dirBytes(path: string): number {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((sum, name) => sum + dirBytes(join(path, name)), 0);
}

interface Backend {
  name: string;
  config: StoreConfig;
  store: QueryStore;
  server: RunningServer;
  /** The same with --answer-cache-mb 0, started for the cases that ask for it. */
  uncachedServer?: RunningServer;
  bytes: number;
}

interface Row {
  c: Case;
  backend: string;
  pages: number;
  http: Measure;
  rss: Rss;
  raw: Measure;
  staticRate: number;
}

/** A query parsed once, as the route would parse it, so the loop times the store alone. */
function rawQuery(store: QueryStore, shape: Shape, path: string): () => Promise<unknown> {
  if (shape.endpoint === ORDER) {
    const id = path.slice(ORDER.length);
    return () => store.getOrder(id);
  }
  const q = readQuery(path);
  if (shape.endpoint === BUNDLES) {
    const filter = readBundleFilter(q);
    const page = readPagination(q, bundleCursors);
    return () => store.listBundles(filter, page);
  }
  const filter = readOrderFilter(q);
  const page = readPagination(q, orderCursors);
  return () => store.listOrders(filter, page);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

/**
 * Each path read once in this process before a case is measured: whatever
 * measures first would otherwise pay for reading the store's pages from disk
 * (seen at 10M orders: 20x slower HTTP than the raw loop that followed it,
 * for the same pages). Warms the OS's page cache, not the server's answers.
 */
async function warm(store: QueryStore, shape: Shape, paths: readonly string[]): Promise<void> {
  for (const p of paths) await rawQuery(store, shape, p)();
}

/** The raw in-process rate: one query at a time on this thread, the case's paths rotated. */
async function raw(store: QueryStore, shape: Shape, paths: readonly string[]): Promise<Measure> {
  const queries = paths.map((p) => rawQuery(store, shape, p));
  const times: number[] = [];
  const started = performance.now();
  const until = started + SECONDS * 1000;
  for (let i = 0; performance.now() < until; i++) {
    const t = performance.now();
    await queries[i % queries.length]!();
    times.push(performance.now() - t);
  }
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return { rate: times.length / elapsed, requests: times.length, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** The same paths answered by the static server, with the bytes the real one gave. */
async function staticRate(origin: string, paths: readonly string[], load: LoadOptions): Promise<number> {
  // A folder of its own: two harnesses running at once (sizes in two shells) must not replay each other's bytes.
  const dir = mkdtempSync(join(BENCH_DATA, '.static-'));
  writeManifest(dir, await capture(origin, paths, load.gzip));
  const server = await startProcess([STATIC_SERVER, dir], READY_PATH);
  try {
    return (await wrk(server.url, paths, load)).rate;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresBytes(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ size: string }>('SELECT pg_database_size(current_database())::text AS size');
    return Number(r.rows[0]!.size);
  } finally {
    await client.end();
  }
}

/** The simulated store, built once and cached; the 10M one takes long, so its growth is logged. */
async function build(spec: DatasetSpec) {
  const dir = join(BENCH_DATA, spec.name);
  const started = Date.now();
  const progress = setInterval(() => {
    log(`building ${spec.name}: ${(dirBytes(dir) / 1e9).toFixed(2)} GB on disk after ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  }, 30_000);
  progress.unref();
  try {
    return await ingestedDataset(spec);
  } finally {
    clearInterval(progress);
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The row where `value` is lowest, with that value; undefined for no rows (a BENCH_ONLY run). */
function lowest(rows: readonly Row[], value: (r: Row) => number): { row: Row; value: number } | undefined {
  let best: { row: Row; value: number } | undefined;
  for (const row of rows) {
    const v = value(row);
    if (best === undefined || v < best.value) best = { row, value: v };
  }
  return best;
}

/** Each goal of issue 11 that one run can show, per backend: met or not, with the figure and the case that decides it. */
function goals(rows: readonly Row[], backends: readonly Backend[], orders: number): string[] {
  const out: string[] = [];
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const where = (r: Row) => (r.c.shape.endpoint === ORDER ? [r.c.shape.name, describeCase(r.c)[4]] : describeCase(r.c).slice(0, 3)).join(' ');
  for (const b of backends) {
    const mine = rows.filter((r) => r.backend === b.name);
    const page50 = mine.filter((r) => r.c.pageSize === 50);
    const ratioGoal = (what: string, cases: readonly Row[], of: 'raw' | 'static', min: number) => {
      const low = lowest(cases, (r) => r.http.rate / (of === 'raw' ? r.raw.rate : r.staticRate));
      if (low) out.push(`- ${b.name}: ${what} >= ${min} of ${of}: ${verdict(low.value >= min)} (lowest ${low.value.toFixed(3)}, ${where(low.row)})`);
    };
    const byId = mine.filter((r) => r.c.shape.endpoint === ORDER && !r.c.uncached);
    ratioGoal('GET /order/{id} (cached)', byId, 'static', 0.5);
    const random50 = page50.filter((r) => r.c.cursors === 'random' && !r.c.gzip && r.c.shape.endpoint !== ORDER);
    const wide50 = page50.filter((r) => r.c.cursors === 'wide');
    ratioGoal('random-cursor page 50', random50, 'raw', 1);
    ratioGoal('random-cursor page 50', random50, 'static', 0.1);
    ratioGoal(`random-cursor page 50 from ${WIDE_POOL} pages (none cached)`, wide50, 'raw', 1);
    ratioGoal(`random-cursor page 50 from ${WIDE_POOL} pages (none cached)`, wide50, 'static', 0.1);
    ratioGoal('repeated first page', page50.filter((r) => r.c.cursors === 'first' && r.c.shape.endpoint !== ORDER), 'static', 0.5);
    const worst = lowest(page50, (r) => -r.http.p99);
    if (worst) out.push(`- ${b.name}: p99 <= 5 ms for every page-50 case: ${verdict(-worst.value <= 5)} (worst ${(-worst.value).toFixed(2)} ms, ${where(worst.row)})`);
    const maxRss = Math.max(...mine.map((r) => r.rss.total));
    const maxAnon = Math.max(...mine.map((r) => r.rss.anon));
    const maxPss = Math.max(...mine.map((r) => r.rss.pss));
    const perOrder = b.bytes / orders;
    out.push(
      `- ${b.name}: server RSS <= 300 MB: ${verdict(maxRss <= 300)} (highest ${fmt(maxRss)} MB summed over its processes, of which heap and stacks at most ${fmt(maxAnon)} MB; ` +
        `shared pages counted once (PSS) at most ${fmt(maxPss)} MB: ${verdict(maxPss <= 300)})`,
      `- ${b.name}: start to first answer <= 1 s: ${verdict(b.server.startMs <= 1000)} (${fmt(b.server.startMs)} ms)`,
      `- ${b.name}: store <= 1 KB per order: ${verdict(perOrder <= 1024)} (${fmt(perOrder)} bytes)`,
    );
  }
  return out;
}

function gitDescription(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).stdout.trim();
  return `${head || 'unknown'}${dirty ? ' with uncommitted changes' : ''}`;
}

/** `serve` on a store, default settings but `extra`. */
function startServe(config: StoreConfig, extra: string[] = []): Promise<RunningServer> {
  return startProcess([CLI, 'serve', ...(config.databaseUrl ? ['--database-url', config.databaseUrl] : ['--data-dir', config.dataDir]), '--port', '0', ...extra], ORDERS);
}

async function runSize(sizeName: string, spec: DatasetSpec, databaseUrl: string | undefined): Promise<string> {
  const began = Date.now();
  const ds = await build(spec);
  const configs: [string, StoreConfig][] = [['embedded', { dataDir: ds.dataDir }]];
  if (databaseUrl) configs.push(['postgres', { dataDir: ds.dataDir, databaseUrl: await ingestedPostgres(ds, spec, databaseUrl) }]);
  const built = Date.now();
  const backends: Backend[] = [];
  const rows: Row[] = [];
  try {
    for (const [name, config] of configs) {
      const bytes = config.databaseUrl ? await postgresBytes(config.databaseUrl) : dirBytes(config.dataDir);
      const server = await startServe(config);
      log(`${name}: serve answered its first page ${server.startMs.toFixed(0)} ms after spawn; store ${(bytes / 1e6).toFixed(0)} MB`);
      backends.push({ name, config, server, bytes, store: await openStore(config, { readOnly: true }) });
    }
    const first = backends[0]!;
    const shapes = await chooseShapes(first.store);
    const pools = new Map<string, string[]>();
    const pool = async (shape: Shape, size: number) => {
      const key = `${shape.name} ${size}`;
      if (!pools.has(key)) pools.set(key, await cursorPool(first.store, shape, size));
      return pools.get(key)!;
    };
    for (const shape of shapes) await pool(shape, POOL);
    log(`cursor pools: ${shapes.map((s) => `${s.name} ${pools.get(`${s.name} ${POOL}`)!.length}`).join(', ')}`);
    for (const b of backends) await wrk(b.server.url, [`${ORDERS}?pagination.first=50`], { ...LOAD, seconds: 2, gzip: false });
    const rawCache = new Map<string, Measure>();
    const only = new RegExp(process.env.BENCH_ONLY ?? '');
    const cases = matrix(shapes).filter((c) => only.test(describeCase(c).join(' ')));
    if (cases.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no case`);
    for (const [n, c] of cases.entries()) {
      const paths = casePaths(c, await pool(c.shape, c.cursors === 'wide' ? WIDE_POOL : POOL));
      const load = { ...LOAD, gzip: c.gzip };
      let staticReqs = NaN;
      for (const b of backends) {
        await warm(b.store, c.shape, paths);
        if (c.uncached && b.uncachedServer === undefined) b.uncachedServer = await startServe(b.config, ['--answer-cache-mb', '0']);
        const server = c.uncached ? b.uncachedServer! : b.server;
        // Steady state: every HTTP worker has seen the pages, as between two blocks for pollers. Wide pools never fit.
        if (c.cursors !== 'wide') await wrk(server.url, paths, { ...load, seconds: SERVER_WARM_SECONDS });
        const t0 = performance.now();
        const http = await wrk(server.url, paths, load);
        const rss = treeRss(server.pid);
        const t1 = performance.now();
        // gzip changes nothing in the store: its raw rate is the plain case's.
        const rawKey = `${b.name} ${paths.join(' ')}`;
        const rawRate = rawCache.get(rawKey) ?? await raw(b.store, c.shape, paths);
        rawCache.set(rawKey, rawRate);
        // Both backends answer the same bytes: one static server stands for both.
        const t2 = performance.now();
        if (Number.isNaN(staticReqs)) staticReqs = await staticRate(b.server.url, paths, load);
        const t3 = performance.now();
        rows.push({ c, backend: b.name, pages: paths.length, http, rss, raw: rawRate, staticRate: staticReqs });
        log(`[${n + 1}/${cases.length}] ${describeCase(c).join(' ')} ${b.name}: ${fmt(http.rate)} req/s p99 ${http.p99.toFixed(2)} ms, raw ${fmt(rawRate.rate)} q/s, static ${fmt(staticReqs)} req/s` +
          ` (s: http ${((t1 - t0) / 1000).toFixed(1)}, raw ${((t2 - t1) / 1000).toFixed(1)}, static ${((t3 - t2) / 1000).toFixed(1)})`);
      }
    }
  } finally {
    for (const b of backends) {
      await b.server.stop();
      await b.uncachedServer?.stop();
      await b.store.close();
    }
  }
  const multi = backends.length > 1;
  const header = ['shape', 'order', 'dir', 'page', 'cursors', 'gzip', ...(multi ? ['store'] : []), 'pages',
    'req/s', 'p50 ms', 'p99 ms', 'RSS MB (anon)', 'PSS MB', 'raw q/s', 'static req/s', '/raw', '/static'];
  const table = markdownTable(header, rows.map((r) => [
    ...describeCase(r.c), ...(multi ? [r.backend] : []), String(r.pages), fmt(r.http.rate), r.http.p50.toFixed(2), r.http.p99.toFixed(2),
    `${fmt(r.rss.total)} (${fmt(r.rss.anon)})`, fmt(r.rss.pss), fmt(r.raw.rate), fmt(r.staticRate), (r.http.rate / r.raw.rate).toFixed(2), (r.http.rate / r.staticRate).toFixed(3),
  ]));
  const finished = Date.now();
  const report = [
    `# npm run bench: ${sizeName}, ${fmt(ds.summary.orders)} orders (${fmt(ds.summary.events)} events)`,
    '',
    `${new Date().toISOString()}, commit ${gitDescription()}, Node ${process.version}, ${availableParallelism()} cores.`,
    `wrk: ${LOAD.connections} connections, ${LOAD.threads} thread(s), ${SECONDS} s per measurement. Server: \`serve\` with default settings.`,
    'raw q/s: the same paths straight on the store (listOrders/listBundles), one at a time on one thread of the harness.',
    'Before each case its paths are read once in the harness, so neither measurement pays for disk reads the other did not,',
    `and but for "wide" the server gets ${SERVER_WARM_SECONDS} s of the case's load, so that each HTTP worker's answer cache holds what it can of its pages.`,
    'static req/s: a node:http cluster on every core answering the captured bytes of the same paths (measured once, from the first store\'s answers).',
    'pages: distinct paths rotated (cursors spread evenly through the listing; for GET /order/{id}, ids of orders spread through the store); a 400-page pool fits the server\'s answer cache after one pass,',
    '"cache 0": measured on a second `serve` started with --answer-cache-mb 0, so that every answer is computed.',
    `"wide" (${WIDE_POOL} pages) does not, so every answer is computed. RSS: the server process tree after the measurement`,
    '(VmRSS summed over its processes, which counts the store pages a process has mapped; in brackets RssAnon, its heap and stacks alone),',
    'and its PSS (pages shared by the processes, such as the program\'s code, counted once: what the server takes from the machine).',
    'A shared machine: figures are noisy; compare the ratios of one run.',
    '',
    ...backends.map((b) => `- ${b.name}: ${fmt(b.bytes / 1e6)} MB, ${fmt(b.bytes / ds.summary.orders)} bytes per order; start to first answer ${fmt(b.server.startMs)} ms`),
    '',
    table,
    '',
    '## Goals (issue 11)',
    '',
    ...goals(rows, backends, ds.summary.orders),
    '',
    `Harness: build/cache check ${((built - began) / 1000).toFixed(0)} s, measurements ${((finished - built) / 1000).toFixed(0)} s.`,
    '',
  ].join('\n');
  mkdirSync(RESULTS, { recursive: true });
  const stem = join(RESULTS, `${new Date().toISOString().slice(0, 10)}-${sizeName}`);
  let file = `${stem}.md`;
  for (let i = 2; existsSync(file); i++) file = `${stem}-${i}.md`;
  writeFileSync(file, report);
  log(`written to ${file}`);
  return report;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sizes: { type: 'string' }, 'database-url': { type: 'string' } } });
  const sizes = (values.sizes ?? process.env.BENCH_SIZES ?? '1m,10m').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = sizes.filter((s) => !(s in SIZES));
  if (unknown.length > 0) throw new Error(`unknown size ${unknown.join(', ')}: choose among ${Object.keys(SIZES).join(', ')}`);
  const databaseUrl = values['database-url'] ?? (process.env.DATABASE_URL || undefined);
  checkWrk();
  for (const size of sizes) console.log(await runSize(size, SIZES[size]!, databaseUrl));
}

await main();
