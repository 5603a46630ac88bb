/**
 * `npm run bench:copy`: ledger-query copy of simulated stores in each
 * direction (embedded -> PostgreSQL, PostgreSQL -> PostgreSQL, PostgreSQL ->
 * embedded, embedded -> embedded): rows/s, wall time, the copy process's peak
 * RSS, and the source's page p99 under wrk while it is copied beside the same
 * load without a copy (issue 32's goals: >= 200,000 order rows/s into either
 * backend, a 10M-order store in under 5 minutes, p99 within 1.5x).
 *
 * Usage: npm run bench:copy [-- --sizes 1m,10m] [--database-url postgres://...] [--page-seconds 60] [--pages-only]
 *   [--base DIR/dist/src/cli.js] [--directions e2p,e2e,p2p,p2e] [--max-rate ROWS]
 * --max-rate: the copies beside the pages are paced (copy --max-rate).
 * --base: another commit's build, whose copy runs just before this one's in
 * each direction: before and after side by side, under the same load.
 * --page-seconds 0 leaves the pages out.
 * Without a URL, a throwaway server of the distribution's PostgreSQL (else
 * the embedded build) is started. Targets are deleted after each run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { distributionBuilds, embeddedBuilds, startPostgres } from '../test/support/pg-server.js';
import { BENCH_DATA, ingestedDataset, type DatasetSpec } from './dataset.js';
import { startProcess, wrk, type Measure } from './load.js';

const CLI = new URL('../src/cli.js', import.meta.url).pathname;
const ORDERS = '/api/v2/orders';
const SPECS: Record<string, DatasetSpec> = {
  small: { name: 'bench-small', seed: 42, blocks: 1_000, ordersPerBlock: 50 },
  '1m': { name: 'bench-1m', seed: 42, blocks: 20_000, ordersPerBlock: 50 },
  '10m': { name: 'bench-10m', seed: 42, blocks: 200_000, ordersPerBlock: 50 },
};
const LOAD = { connections: 4, threads: 1, gzip: false };

const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`);

interface Copied {
  direction: string;
  /** Which build copied: this one, or --base. */
  build: string;
  rows: number;
  orderRows: number;
  wallSeconds: number;
  /** The copy process's own (user and system), the database server's aside. */
  cpuSeconds: number;
  loadSeconds: number;
  peakRssMb: number;
  block: string;
  /** The machine's 1-minute load average as the copy ended: what else ran beside it. */
  loadAverage: string;
}

/** Runs the CLI's copy under /usr/bin/time; its figures from its last line, its peak RSS from time. */
function runCopy(cli: string, from: string, to: string): Promise<Omit<Copied, 'direction' | 'build' | 'orderRows' | 'loadAverage'>> {
  const dir = mkdtempSync(join(BENCH_DATA, 'copy-time-'));
  const timeFile = join(dir, 'time');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%M %U %S', '-o', timeFile, process.execPath, cli, 'copy', '--from', from, '--to', to], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const wallSeconds = (performance.now() - started) / 1000;
      const [peakKb, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number];
      rmSync(dir, { recursive: true, force: true });
      const m = /: block (\d+), (\d+) rows in \d+ tables, checked, in [\d.]+ s \((\d+) rows\/s loading\)/.exec(out);
      if (code !== 0 || m === null) return reject(new Error(`copy ${from} -> ${to} exited ${code}: ${out.slice(-2000)}`));
      const rows = Number(m[2]);
      resolve({ rows, wallSeconds, cpuSeconds: user + sys, loadSeconds: rows / Number(m[3]), peakRssMb: peakKb / 1024, block: m[1]! });
    });
  });
}

/** Order rows (current states and history) of an embedded store. */
function orderRows(dataDir: string): number {
  const db = new Database(join(dataDir, 'ledger.db'), { readonly: true });
  try {
    return ['orders_current', 'orders_history']
      .map((t) => Number(db.prepare(`SELECT count(*) FROM ${t}`).pluck().get()))
      .reduce((a, b) => a + b, 0);
  } finally {
    db.close();
  }
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function freshDatabase(serverUrl: string, name: string): Promise<string> {
  await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  return databaseUrl(serverUrl, name);
}

/**
 * Page p99 of the source under wrk: `seconds` without a copy, then as long
 * again while a copy to `target` runs (started first), which is then stopped
 * (Ctrl-C's way): the pages are measured, not the copy.
 */
async function pagesBeside(source: string[], seconds: number, from: string, target: string, pace: string[]): Promise<{ alone: Measure; copying: Measure }> {
  const server = await startProcess([CLI, 'serve', '--no-ingest', '--workers', '1', '--answer-cache-mb', '0', '--port', '0', ...source], ORDERS);
  try {
    const first = JSON.parse(execFileSync('curl', ['-s', `${server.url}${ORDERS}?pagination.first=1&filter.statuses=STATUS_ACTIVE`], { encoding: 'utf8' })) as {
      orders: { edges: { node: { marketId: string; partyId: string } }[] };
    };
    const node = first.orders.edges[0]!.node;
    const paths = [
      `${ORDERS}?pagination.first=50`, `${ORDERS}?pagination.first=50&filter.statuses=STATUS_ACTIVE`,
      `${ORDERS}?pagination.first=50&filter.marketIds=${node.marketId}`, `${ORDERS}?pagination.first=50&filter.partyIds=${node.partyId}`,
      `${ORDERS}?pagination.last=50&filter.liveOnly=true`,
    ];
    const alone = await wrk(server.url, paths, { ...LOAD, seconds });
    const copy = spawn(process.execPath, [CLI, 'copy', '--from', from, '--to', target, ...pace], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((resolve) => copy.once('exit', resolve));
    // Measured once the copy has opened both stores and is moving rows: its first log line.
    await new Promise((resolve) => copy.stderr.once('data', resolve));
    copy.stderr.resume();
    const copying = await wrk(server.url, paths, { ...LOAD, seconds });
    if (copy.exitCode !== null) throw new Error(`the copy ended before the pages were measured beside it: lengthen --page-seconds`);
    copy.kill('SIGTERM');
    await exited;
    return { alone, copying };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1m' }, 'database-url': { type: 'string' }, 'page-seconds': { type: 'string', default: '60' },
      // The source's pages only (the PostgreSQL source is the database copies left, or a copy made for them).
      'pages-only': { type: 'boolean', default: false },
      base: { type: 'string' }, directions: { type: 'string', default: 'e2p,e2e,p2p,p2e' }, 'max-rate': { type: 'string' },
    },
  });
  let serverUrl = values['database-url'];
  let stopServer = async () => {};
  if (serverUrl === undefined) {
    const build = distributionBuilds()[0] ?? embeddedBuilds()[0]!;
    const server = await startPostgres(build);
    serverUrl = server.url;
    stopServer = () => server.stop();
    log(`started ${server.version}`);
  }
  const lines: string[] = [];
  try {
    for (const size of values.sizes.split(',')) {
      const spec = SPECS[size];
      if (spec === undefined) throw new Error(`unknown size ${size}: one of ${Object.keys(SPECS).join(', ')}`);
      const ds = await ingestedDataset(spec);
      const orders = orderRows(ds.dataDir);
      const name = `lq_copy_${size}`;
      const results: Copied[] = [];
      const pages: string[] = [];
      const builds: [string, string][] = values.base === undefined ? [['this', CLI]] : [['base', values.base], ['this', CLI]];
      const measure = async (direction: string, from: string, to: string, build: string, cli: string) => {
        log(`${size}: ${direction} (${build})`);
        const r = await runCopy(cli, from, to);
        results.push({ direction, build, orderRows: orders, loadAverage: loadavg()[0]!.toFixed(1), ...r });
        log(`${size}: ${direction} (${build}): ${r.rows} rows in ${r.wallSeconds.toFixed(1)} s, ${r.cpuSeconds.toFixed(1)} CPU s, peak RSS ${r.peakRssMb.toFixed(0)} MB`);
      };
      const e2 = join(BENCH_DATA, `${spec.name}-copy`);
      rmSync(e2, { recursive: true, force: true });
      const p1 = values['pages-only'] ? databaseUrl(serverUrl, `${name}_a`) : await freshDatabase(serverUrl, `${name}_a`);
      const wanted = new Set(values.directions.split(','));
      if (!values['pages-only']) {
        // Each build in turn, direction by direction; the first copy into PostgreSQL is the PostgreSQL source of the rest.
        let p1Made = false;
        for (const [build, cli] of builds) {
          if (!wanted.has('e2p') && p1Made) break;
          const target = p1Made ? await freshDatabase(serverUrl, `${name}_b`) : p1;
          await measure('embedded -> PostgreSQL', ds.dataDir, target, build, cli);
          p1Made = true;
        }
        for (const [build, cli] of wanted.has('e2e') ? builds : []) {
          await measure('embedded -> embedded', ds.dataDir, e2, build, cli);
          rmSync(e2, { recursive: true, force: true });
        }
        for (const [build, cli] of wanted.has('p2p') ? builds : []) {
          await measure('PostgreSQL -> PostgreSQL', p1, await freshDatabase(serverUrl, `${name}_b`), build, cli);
        }
        for (const [build, cli] of wanted.has('p2e') ? builds : []) {
          await measure('PostgreSQL -> embedded', p1, e2, build, cli);
          rmSync(e2, { recursive: true, force: true });
        }
        await admin(serverUrl, `DROP DATABASE IF EXISTS ${name}_b WITH (FORCE)`);
      }

      // The source's pages beside a copy (stopped once measured).
      const seconds = Number(values['page-seconds']);
      for (const [direction, source, from, target] of seconds <= 0 ? [] : [
        ['embedded -> PostgreSQL', ['--data-dir', ds.dataDir], ds.dataDir, await freshDatabase(serverUrl, `${name}_b`)],
        // A backup of a store serve is writing: the copy's two threads read the source beside its readers.
        ['embedded -> embedded', ['--data-dir', ds.dataDir], ds.dataDir, e2],
        ['PostgreSQL -> embedded', ['--database-url', p1], p1, e2],
      ] as [string, string[], string, string][]) {
        log(`${size}: pages of the source beside ${direction}`);
        const pace = values['max-rate'] === undefined ? [] : ['--max-rate', values['max-rate']];
        const { alone, copying } = await pagesBeside(source, seconds, from, target, pace);
        pages.push(`| ${size} | ${direction} | ${alone.p99.toFixed(1)} | ${copying.p99.toFixed(1)} | ${(copying.p99 / alone.p99).toFixed(2)} | ${alone.rate.toFixed(0)} | ${copying.rate.toFixed(0)} |`);
        rmSync(e2, { recursive: true, force: true });
      }
      await admin(serverUrl, `DROP DATABASE IF EXISTS ${name}_b WITH (FORCE)`);
      rmSync(e2, { recursive: true, force: true });
      if (!values['pages-only']) await admin(serverUrl, `DROP DATABASE ${name}_a WITH (FORCE)`);

      lines.push(
        `### ${size}: ${orders.toLocaleString('en-US')} order rows (current and history)${results[0] ? `, block ${results[0].block}` : ''}`,
        '',
        '| direction | build | rows | wall s | order rows/s (wall) | rows/s loading | copy CPU s | peak RSS MB | load avg |',
        '|---|---|---|---|---|---|---|---|---|',
        ...results.map((r) => `| ${r.direction} | ${r.build} | ${r.rows.toLocaleString('en-US')} | ${r.wallSeconds.toFixed(1)} | ${Math.round(r.orderRows / r.wallSeconds).toLocaleString('en-US')} | ${Math.round(r.rows / r.loadSeconds).toLocaleString('en-US')} | ${r.cpuSeconds.toFixed(1)} | ${r.peakRssMb.toFixed(0)} | ${r.loadAverage} |`),
        '',
        `Source pages under wrk (${LOAD.connections} connections, answer cache off), ${seconds} s each${values['max-rate'] === undefined ? '' : `, the copy at --max-rate ${values['max-rate']}`}:`,
        '',
        '| size | copy | p99 ms alone | p99 ms beside the copy | ratio | req/s alone | req/s beside |',
        '|---|---|---|---|---|---|---|',
        ...pages,
        '',
      );
      process.stdout.write(`${lines.slice(-(results.length + pages.length + 10)).join('\n')}\n`);
    }
  } finally {
    await stopServer();
  }
  const out = join(new URL('../../bench/results/', import.meta.url).pathname, `copy-${new Date().toISOString().slice(0, 16).replace(/:/g, '')}.md`);
  writeFileSync(out, `${lines.join('\n')}\n`);
  log(`written ${out}`);
}

await main();
