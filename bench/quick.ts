/**
 * Query benchmark on a 1M-order store, every backend side by side in one run:
 * the embedded store and PostgreSQL on each server at hand. For each filter
 * shape and page size: HTTP requests/s and latency of `ledger-query serve`
 * (autocannon in its own process) with its answer cache (a poller's repeated
 * page) and without it (every answer computed: what a slow query cannot hide
 * behind), beside the raw rate of the same query straight on the store, in
 * process, one at a time.
 *
 * Usage: npm run bench:quick [-- --database-url postgres://... | --no-postgres]
 * Without a URL, a server of every PostgreSQL build on the machine is started
 * (the embedded one npm installs and the distribution's, JIT and all), its
 * files kept in bench/data/postgres-<build> so that the dataset is ingested
 * once. BENCH_SECONDS=5 per measurement by default.
 */
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { orderCursors } from '../src/api/cursor.js';
import { readOrderFilter, readPagination } from '../src/api/read-parameters.js';
import { readQuery } from '../src/api/query.js';
import { openStore,  } from '../src/store/open.js';
import type { StoreConfig } from '../src/store/store.js';
import { distributionBuilds, embeddedBuilds, startPostgres, type RunningPostgres } from '../test/support/pg-server.js';
import { BENCH_DATA, ingestedDataset, ingestedPostgres, type DatasetSpec } from './dataset.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

interface Measure { rate: number; p50: number; p99: number }

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

/** The command-line options naming a store. */
const storeArgs = (c: StoreConfig) => (c.databaseUrl ? ['--database-url', c.databaseUrl] : ['--data-dir', c.dataDir]);

async function startServer(config: StoreConfig, extra: string[] = []): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...storeArgs(config), '--port', '0', ...extra], {
    env: { ...process.env, LOG_LEVEL: 'info', LOG_REQUESTS: '0' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening at (http:\/\/[^"\s]+)/i.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

/**
 * The load generator runs in its own process: sharing this one with the raw
 * query loops made it, not the server, the bottleneck (measured: a standalone
 * server answered 3-5x faster than the in-process client could ask).
 */
async function http(url: string): Promise<Measure> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    AUTOCANNON, '--json', '--connections', String(CONNECTIONS), '--duration', String(SECONDS), url,
  ], { maxBuffer: 64 << 20 });
  const r = JSON.parse(stdout) as AutocannonResult;
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rate: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

/** The same query straight on the store, in this process, one at a time. */
async function raw(config: StoreConfig, path: string): Promise<Measure> {
  const store = await openStore(config, { readOnly: true });
  const q = readQuery(path);
  const filter = readOrderFilter(q);
  const page = readPagination(q, orderCursors);
  const times: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  while (performance.now() < until) {
    const t = performance.now();
    await store.listOrders(filter, page);
    times.push(performance.now() - t);
  }
  await store.close();
  times.sort((a, b) => a - b);
  return { rate: times.length / SECONDS, p50: percentile(times, 50), p99: percentile(times, 99) };
}

const SPEC: DatasetSpec = { name: 'quick-1m', seed: 42, blocks: 20_000, ordersPerBlock: 50 };

interface Backend {
  name: string;
  config: StoreConfig;
  /** With the answer cache, as served by default. */
  cached: { url: string; stop: () => void };
  /** With --answer-cache-mb 0: every request computes its answer. */
  uncached: { url: string; stop: () => void };
}

/** The PostgreSQL servers to measure: the one a URL names, or one of every build on the machine. */
async function postgresServers(databaseUrl: string | undefined, none: boolean): Promise<{ name: string; url: string; server?: RunningPostgres }[]> {
  if (none) return [];
  if (databaseUrl) return [{ name: 'postgres', url: databaseUrl }];
  const builds = [embeddedBuilds()[0], ...distributionBuilds()].filter((b) => b !== undefined);
  const out: { name: string; url: string; server: RunningPostgres }[] = [];
  for (const build of builds) {
    const server = await startPostgres(build, { keepIn: join(BENCH_DATA, `postgres-${build.id}`) });
    process.stderr.write(`started ${server.version}${server.jitAvailable ? ' (JIT available)' : ''}\n`);
    out.push({ name: `pg ${build.id}`, url: server.url, server });
  }
  return out;
}

async function main() {
  const { values } = parseArgs({ options: { 'database-url': { type: 'string' }, 'no-postgres': { type: 'boolean' } } });
  const databaseUrl = values['database-url'] ?? (process.env.DATABASE_URL || undefined);
  const ds = await ingestedDataset(SPEC);
  process.stderr.write(`store: ${ds.summary.orders} orders, ${ds.summary.events} events\n`);
  const servers = await postgresServers(databaseUrl, values['no-postgres'] === true);
  const configs: [string, StoreConfig][] = [['embedded', { dataDir: ds.dataDir }]];
  for (const s of servers) configs.push([s.name, { dataDir: ds.dataDir, databaseUrl: await ingestedPostgres(ds, SPEC, s.url) }]);
  const backends: Backend[] = [];
  try {
    for (const [name, config] of configs) {
      backends.push({ name, config, cached: await startServer(config), uncached: await startServer(config, ['--answer-cache-mb', '0']) });
    }
    const first = backends[0]!.cached;
    // Filter values come from the data itself: the busiest party, a market.
    const sample = await (await fetch(`${first.url}/api/v2/orders?pagination.first=5000`)).json() as {
      orders: { edges: { node: { partyId: string; marketId: string } }[] };
    };
    const count = new Map<string, number>();
    for (const { node } of sample.orders.edges) count.set(node.partyId, (count.get(node.partyId) ?? 0) + 1);
    const party = [...count.entries()].filter(([p]) => p !== 'network').sort((a, b) => b[1] - a[1])[0]![0];
    const market = sample.orders.edges[0]!.node.marketId;
    const shapes: [string, string][] = [
      ['no filter', ''],
      ['status ACTIVE', 'filter.statuses=STATUS_ACTIVE'],
      ['rare statuses', 'filter.statuses=STATUS_REJECTED&filter.statuses=STATUS_PARKED'],
      ['busiest party', `filter.partyIds=${party}`],
      ['market live only', `filter.marketIds=${market}&filter.liveOnly=true`],
      ['network orders', 'filter.partyIds=network&filter.types=TYPE_NETWORK'],
      ['market oldest first', `filter.marketIds=${market}&pagination.newestFirst=false`],
    ];
    const floors: string[] = [];
    for (const b of backends) {
      process.stderr.write(`measuring GET /health on ${b.name} (the HTTP floor)\n`);
      const health = await http(`${b.cached.url}/health`);
      floors.push(`${b.name}: GET /health ${health.rate.toFixed(0)} req/s, p50 ${health.p50} ms, p99 ${health.p99} ms`);
    }
    const rows: string[] = [];
    /** Raw rates by shape and size, per backend: the PostgreSQL servers are compared with each other below. */
    const rawRates = new Map<string, Map<string, number>>();
    const fmt = (m: Measure) => `${m.rate.toFixed(0).padStart(7)} ${m.p50.toFixed(2).padStart(7)} ${m.p99.toFixed(2).padStart(7)}`;
    for (const [name, query] of shapes) {
      for (const size of [50, 1000]) {
        const path = `/api/v2/orders?${query}${query ? '&' : ''}pagination.first=${size}`;
        for (const b of backends) {
          process.stderr.write(`measuring ${name}, page ${size}, ${b.name}\n`);
          const cached = await http(b.cached.url + path);
          const uncached = await http(b.uncached.url + path);
          const r = await raw(b.config, path);
          const key = `${name.padEnd(20)} ${String(size).padStart(5)}`;
          if (!rawRates.has(key)) rawRates.set(key, new Map());
          rawRates.get(key)!.set(b.name, r.rate);
          rows.push(`${key} ${b.name.padEnd(20)} | ${fmt(cached)} | ${fmt(uncached)} | ${fmt(r)} | ${(uncached.rate / r.rate).toFixed(2).padStart(5)}`);
          process.stderr.write(`${rows.at(-1)}\n`);
        }
      }
    }
    const head = (s: string) => `${s.padStart(7)} ${'p50ms'.padStart(7)} ${'p99ms'.padStart(7)}`;
    console.log(`\n1M-order store (${ds.summary.orders} orders), ${SECONDS} s per measurement, ${CONNECTIONS} HTTP connections`);
    for (const s of servers) if (s.server) console.log(`${s.name}: ${s.server.version}${s.server.jitAvailable ? ', JIT available' : ''}`);
    console.log(`HTTP floor: ${floors.join('; ')}\n`);
    console.log(`${'shape'.padEnd(20)} ${'page'.padStart(5)} ${'store'.padEnd(20)} | ${head('cached')} | ${head('uncached')} | ${head('raw q/s')} | uncached/raw`);
    for (const row of rows) console.log(row);
    const pg = backends.filter((b) => b.name !== 'embedded').map((b) => b.name);
    if (pg.length > 1) {
      console.log(`\nRaw rates of each PostgreSQL server over ${pg[0]}'s, same shape and page:`);
      for (const [key, rates] of rawRates) {
        const base = rates.get(pg[0]!)!;
        console.log(`${key} ${pg.slice(1).map((n) => `${n} ${(rates.get(n)! / base).toFixed(2)}`).join(', ')}`);
      }
    }
  } finally {
    for (const b of backends) {
      b.cached.stop();
      b.uncached.stop();
    }
    for (const s of servers) await s.server?.stop();
  }
}

await main();
