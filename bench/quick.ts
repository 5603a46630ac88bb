/**
 * Query benchmark on a 1M-order store: HTTP requests/s and latency of real
 * requests (autocannon against `ledger-query serve` in its own process) beside
 * the raw in-process query rate of the same store, same filters, same run.
 * Usage: npm run bench:quick [-- --database-url postgres://...]
 * (BENCH_SECONDS=5 per measurement by default). With a database URL the same
 * dataset is also ingested into a database of its own on that server, and
 * each query is measured on both backends, side by side in one run.
 */
import { execFile, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { orderCursors } from '../src/api/cursor.js';
import { readOrderFilter, readPagination } from '../src/api/params.js';
import { readQuery } from '../src/api/query.js';
import { openStore, type StoreConfig } from '../src/store/open.js';
import { ingestedDataset, ingestedPostgres, type DatasetSpec } from './dataset.js';

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

async function startServer(config: StoreConfig): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...storeArgs(config), '--port', '0'], {
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
  const store = await openStore(config, { readonly: true });
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

interface Backend { name: string; config: StoreConfig; server: { url: string; stop: () => void } }

async function main() {
  const { values } = parseArgs({ options: { 'database-url': { type: 'string' } } });
  const databaseUrl = values['database-url'] ?? (process.env.DATABASE_URL || undefined);
  const ds = await ingestedDataset(SPEC);
  process.stderr.write(`store: ${ds.summary.orders} orders, ${ds.summary.events} events\n`);
  const configs: [string, StoreConfig][] = [['embedded', { dataDir: ds.dataDir }]];
  if (databaseUrl) configs.push(['postgres', { dataDir: ds.dataDir, databaseUrl: await ingestedPostgres(ds, SPEC, databaseUrl) }]);
  const backends: Backend[] = [];
  try {
    for (const [name, config] of configs) backends.push({ name, config, server: await startServer(config) });
    const first = backends[0]!.server;
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
      const health = await http(`${b.server.url}/health`);
      floors.push(`${b.name}: GET /health ${health.rate.toFixed(0)} req/s, p50 ${health.p50} ms, p99 ${health.p99} ms`);
    }
    const rows: string[] = [];
    const fmt = (m: Measure) => `${m.rate.toFixed(0).padStart(7)} ${m.p50.toFixed(2).padStart(7)} ${m.p99.toFixed(2).padStart(7)}`;
    for (const [name, query] of shapes) {
      for (const size of [50, 1000]) {
        const path = `/api/v2/orders?${query}${query ? '&' : ''}pagination.first=${size}`;
        for (const b of backends) {
          process.stderr.write(`measuring ${name}, page ${size}, ${b.name}\n`);
          const h = await http(b.server.url + path);
          const r = await raw(b.config, path);
          rows.push(`${name.padEnd(20)} ${String(size).padStart(5)} ${b.name.padEnd(9)} | ${fmt(h)} | ${fmt(r)} | ${(h.rate / r.rate).toFixed(2).padStart(5)}`);
          process.stderr.write(`${rows.at(-1)}\n`);
        }
      }
    }
    console.log(`\n1M-order store (${ds.summary.orders} orders), ${SECONDS} s per measurement, ${CONNECTIONS} HTTP connections`);
    console.log(`HTTP floor: ${floors.join('; ')}\n`);
    console.log(`${'shape'.padEnd(20)} ${'page'.padStart(5)} ${'store'.padEnd(9)} | ${'HTTP/s'.padStart(7)} ${'p50ms'.padStart(7)} ${'p99ms'.padStart(7)} | ${'raw q/s'.padStart(7)} ${'p50ms'.padStart(7)} ${'p99ms'.padStart(7)} | HTTP/raw`);
    for (const row of rows) console.log(row);
  } finally {
    for (const b of backends) b.server.stop();
  }
}

await main();
