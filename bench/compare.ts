/**
 * npm run bench:compare -- --base COMMIT: the working tree against another
 * commit, side by side on one machine, the same data and the same load, in
 * alternated rounds, as a ratio per shape of request; so that a change to
 * the request path is weighed against the sum of what came before it, not
 * measured alone within noise (issue 30). With --static, the static server
 * answering the same bytes (./static-server.ts, the transport limit) is a
 * contestant too, and the cached shapes are also given as a share of it;
 * with --database-url URL (or --postgres, a throwaway server of the machine's
 * PostgreSQL binaries), the working tree on that PostgreSQL store as well.
 *
 * The base is built in a git worktree of its own under bench/data/compare/
 * (npm ci and its build, kept for the next run). One event file is simulated
 * once; one store ingested from it serves both, unless the base cannot read
 * a store of this schema (an older base): then it ingests the same file into
 * a store of its own. Every shape is driven by wrk (16 connections, its own
 * process), each build's `serve` with its defaults (one HTTP process per core;
 * --workers N for N, and as many static server processes). Beside each rate,
 * the server's CPU time per request (all its processes).
 *
 * Usage: npm run bench:compare -- [--base COMMIT[,COMMIT...]] [--static] [--database-url URL | --postgres]
 *   [--rounds 3] [--seconds 5] [--blocks 3000] [--only cached,first,uncached,stream] [--workers N]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/open.js';
import { distributionBuilds, embeddedBuilds, startPostgres, type RunningPostgres } from '../test/support/pg-server.js';
import { BENCH_DATA } from './dataset.js';
import { capture, checkWrk, startProcess, treeCpuSeconds, wrk, type RunningServer } from './load.js';
import { cursorPool, casePaths, ORDERS, type Case, type Shape } from './shapes.js';
import { READY_PATH, writeManifest } from './static-server.js';
import { streamSnapshots } from './stream-snapshots.js';

const TREE = fileURLToPath(new URL('../../', import.meta.url));
const STATIC_SERVER = fileURLToPath(new URL('./static-server.js', import.meta.url));
const COMPARE_DATA = join(BENCH_DATA, 'compare');
const CONNECTIONS = 16;
/** Pages of the random-cursor shape: as `npm run bench`'s pool, all of them held by each process's answer cache. */
const POOL = 400;
const FIRST_PAGE = `${ORDERS}?pagination.first=50`;

type ShapeName = 'cached' | 'first' | 'uncached' | 'stream';
const SHAPES: readonly ShapeName[] = ['cached', 'first', 'uncached', 'stream'];
const SHAPE_TEXT: Record<ShapeName, string> = {
  cached: 'cached page-50, random cursors',
  first: 'cached first page, repeated',
  uncached: 'uncached page-50, random cursors (--answer-cache-mb 0)',
  stream: 'stream delivery (order snapshots over HTTP)',
};

function log(msg: string): void {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

function run(command: string, args: string[], cwd: string): void {
  const r = spawnSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} in ${cwd} failed (${r.status ?? r.signal})`);
}

/** The base commit built in a worktree of its own (kept: a second run reuses it). */
function buildBase(commit: string): { sha: string; cli: string } {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${commit}^{commit}`], { cwd: TREE, encoding: 'utf8' }).trim();
  const dir = join(COMPARE_DATA, sha.slice(0, 12));
  const cli = join(dir, 'dist', 'src', 'cli.js');
  const built = join(dir, '.built');
  if (existsSync(built)) return { sha, cli };
  if (!existsSync(dir)) {
    mkdirSync(COMPARE_DATA, { recursive: true });
    run('git', ['worktree', 'add', '--detach', dir, sha], TREE);
  }
  log(`building ${sha.slice(0, 12)} in ${dir} (npm ci, npm run build)`);
  // Its own node_modules: the store's driver differs between commits.
  run('npm', ['ci', '--no-audit', '--no-fund'], dir);
  run('npm', ['run', 'build'], dir);
  writeFileSync(built, sha);
  return { sha, cli };
}

/** The event file, simulated once by the working tree, and a store ingested from it by `cli` into `name`. */
function dataset(blocks: number): { events: string; store: (cli: string, name: string) => string } {
  const dir = join(COMPARE_DATA, `data-${blocks}`);
  const events = join(dir, 'net.events');
  if (!existsSync(events)) {
    mkdirSync(dir, { recursive: true });
    log(`simulating ${blocks} blocks into ${events}`);
    run(process.execPath, [join(TREE, 'dist', 'src', 'cli.js'), 'simulate', '--out', `${events}.part`, '--blocks', String(blocks), '--seed', '42'], TREE);
    run('mv', [`${events}.part`, events], dir);
  }
  return {
    events,
    store(cli, name) {
      const dataDir = join(dir, name);
      if (existsSync(join(dataDir, '.ingested'))) return dataDir;
      rmSync(dataDir, { recursive: true, force: true });
      log(`ingesting ${events} into ${dataDir}`);
      run(process.execPath, [cli, 'ingest', events, '--data-dir', dataDir], TREE);
      writeFileSync(join(dataDir, '.ingested'), cli);
      return dataDir;
    },
  };
}

/** One server to measure: how to start it, with or without its answer cache. */
interface Contestant {
  name: string;
  start(cached: boolean): Promise<RunningServer>;
  /** It has the order stream (older commits do not). */
  stream: boolean;
}

function serveContestant(name: string, cli: string, store: string[], workers: string[]): Contestant {
  return {
    name,
    stream: existsSync(join(cli, '..', 'api', 'stream')),
    start: (cached) => startProcess([cli, 'serve', '--no-ingest', ...store, ...workers, '--port', '0', ...(cached ? [] : ['--answer-cache-mb', '0'])], FIRST_PAGE),
  };
}

/** Can `cli` serve the store at `dataDir` (a base older than its schema cannot)? */
async function canServe(cli: string, dataDir: string): Promise<boolean> {
  try {
    await (await startProcess([cli, 'serve', '--no-ingest', '--data-dir', dataDir, '--port', '0'], FIRST_PAGE)).stop();
    return true;
  } catch {
    return false;
  }
}

/** The static server on the answers `origin` gives for `paths`. */
async function staticContestant(origin: string, paths: readonly string[], workers: string[]): Promise<Contestant> {
  const dir = mkdtempSync(join(COMPARE_DATA, '.static-'));
  writeManifest(dir, await capture(origin, paths, false));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return { name: 'static', stream: false, start: () => startProcess([STATIC_SERVER, dir, ...workers.slice(1)], READY_PATH) };
}

/**
 * Requests (or, for the stream, snapshots) per second of `shape` on a
 * running server, and the server's CPU time per request in us (all its
 * processes; NaN for the stream): the rate moves with the machine's other
 * load, the CPU a request takes much less.
 */
async function measure(
  server: RunningServer, shape: ShapeName, paths: { random: string[]; market: string }, seconds: number,
): Promise<{ rate: number; cpuUs: number }> {
  const load = { seconds, connections: CONNECTIONS, threads: 1, gzip: false };
  if (shape === 'stream') return { rate: await streamSnapshots(server.url, paths.market, { seconds, clients: 8 }), cpuUs: NaN };
  const list = shape === 'first' ? [FIRST_PAGE] : paths.random;
  // Each process's cache holds every page before the measurement, as between two blocks for pollers.
  if (shape !== 'uncached') await wrk(server.url, list, { ...load, seconds: 1 });
  const cpuBefore = treeCpuSeconds(server.pid);
  const m = await wrk(server.url, list, load);
  return { rate: m.rate, cpuUs: ((treeCpuSeconds(server.pid) - cpuBefore) * 1e6) / m.requests };
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function ratioLine(label: string, ratios: readonly number[], rates: string): string {
  if (ratios.length === 0) return `${label}: n/a`;
  const sorted = [...ratios].sort((a, b) => a - b);
  return `${label}: ${median(ratios).toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}; range ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}) ${rates}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      base: { type: 'string' }, static: { type: 'boolean' }, 'database-url': { type: 'string' }, postgres: { type: 'boolean' },
      rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' }, blocks: { type: 'string', default: '3000' },
      only: { type: 'string' }, workers: { type: 'string' },
    },
  });
  if (values.base === undefined && values.static !== true) throw new Error('bench:compare needs --base COMMIT, --static, or both');
  checkWrk();
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const shapes = values.only === undefined ? SHAPES : SHAPES.filter((s) => values.only!.split(',').includes(s));
  const workers = values.workers === undefined ? [] : ['--workers', String(Number(values.workers))];
  const treeCli = join(TREE, 'dist', 'src', 'cli.js');
  const data = dataset(Number(values.blocks));
  const treeStore = data.store(treeCli, 'store-tree');
  const tree = serveContestant('tree', treeCli, ['--data-dir', treeStore], workers);
  const contestants: Contestant[] = [tree];
  // Several bases (a bisect) are measured in the same rounds.
  for (const commit of values.base?.split(',') ?? []) {
    const base = buildBase(commit);
    const baseStore = (await canServe(base.cli, treeStore)) ? treeStore : data.store(base.cli, `store-${base.sha.slice(0, 12)}`);
    contestants.push(serveContestant(`base ${base.sha.slice(0, 12)}`, base.cli, ['--data-dir', baseStore], workers));
  }
  let postgres: RunningPostgres | undefined;
  let databaseUrl = values['database-url'];
  if (values.postgres === true) {
    const build = embeddedBuilds()[0] ?? distributionBuilds()[0];
    if (build === undefined) throw new Error('no PostgreSQL server binaries on this machine: give --database-url');
    postgres = await startPostgres(build);
    process.once('exit', () => void postgres?.stop());
    databaseUrl = postgres.url;
  }
  if (databaseUrl !== undefined) {
    // Ingested by the tree on every run: a database may have been written since.
    log(`ingesting ${data.events} into PostgreSQL`);
    run(process.execPath, [treeCli, 'ingest', data.events, '--database-url', databaseUrl], TREE);
    contestants.push(serveContestant('tree postgres', treeCli, ['--database-url', databaseUrl], workers));
  }
  // The pages asked: cursors of real rows spread through the listing, read off the tree's store.
  const store = await openStore({ dataDir: treeStore }, { readOnly: true });
  const noFilter: Shape = { name: 'no filter', endpoint: ORDERS, query: '' };
  const random = casePaths({ shape: noFilter, newestFirst: true, backward: false, pageSize: 50, cursors: 'random', gzip: false } satisfies Case, await cursorPool(store, noFilter, POOL));
  const market = ((await store.listOrders({}, { newestFirst: true, mode: 'first', limit: 1 })).rows[0]!.json.match(/"marketId":"(\w+)"/) ?? [])[1] ?? '';
  await store.close();
  const paths = { random, market };
  if (values.static === true) {
    const server = await tree.start(true);
    try {
      contestants.push(await staticContestant(server.url, [FIRST_PAGE, ...random], workers));
    } finally {
      await server.stop();
    }
  }
  // Every server up at once (an idle one costs nothing), so that the contestants of a shape are measured seconds apart.
  const servers = new Map<string, RunningServer>();
  const stopAll = () => Promise.all([...servers.values()].map((server) => server.stop()));
  // Stopped by a signal, the servers stop too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)));
  const serverOf = async (c: Contestant, cached: boolean) => {
    const key = `${c.name} ${cached}`;
    if (!servers.has(key)) {
      const server = await c.start(cached);
      servers.set(key, server);
      // Its answer cache filled once with every page asked (the static server's warms nothing).
      if (cached) await wrk(server.url, paths.random, { seconds: 3, connections: CONNECTIONS, threads: 1, gzip: false });
    }
    return servers.get(key)!;
  };
  // rates[contestant][shape][round], and the CPU us per request beside them
  const rates = new Map(contestants.map((c) => [c.name, new Map(shapes.map((s) => [s, [] as number[]]))]));
  const cpu = new Map(contestants.map((c) => [c.name, new Map(shapes.map((s) => [s, [] as number[]]))]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const s of shapes) {
        // Each round and shape the other way round: whoever goes first meets the machine as the last measurement left it.
        const order = (round + shapes.indexOf(s)) % 2 === 0 ? contestants : [...contestants].reverse();
        for (const c of order.filter((x) => (s !== 'stream' || x.stream) && (s !== 'uncached' || x.name !== 'static'))) {
          const { rate, cpuUs } = await measure(await serverOf(c, s !== 'uncached'), s, paths, seconds);
          rates.get(c.name)!.get(s)!.push(rate);
          cpu.get(c.name)!.get(s)!.push(cpuUs);
          log(`round ${round + 1}/${rounds} ${c.name} ${s}: ${rate.toFixed(0)}/s, ${cpuUs.toFixed(1)} us CPU a request`);
        }
      }
    }
  } finally {
    await stopAll();
    await postgres?.stop();
  }
  const pairs = (a: string, b: string, s: ShapeName, of = rates) => {
    const x = of.get(a)?.get(s) ?? [];
    const y = of.get(b)?.get(s) ?? [];
    // A shape one of them does not have (the stream, before it existed; the static server's uncached pages): none.
    return x.length > 0 && x.length === y.length ? x.map((v, i) => v / y[i]!) : [];
  };
  const perSecond = (name: string, s: ShapeName) => `${name} ${median(rates.get(name)!.get(s)!).toFixed(0)}/s`;
  const lines: string[] = [];
  const summary: string[] = [];
  const head = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: TREE, encoding: 'utf8' }).stdout.trim();
  for (const other of contestants.slice(1).filter((c) => c.name !== 'tree postgres')) {
    for (const s of shapes) {
      const r = pairs('tree', other.name, s);
      const text = r.length === 0 ? '' : `(${perSecond('tree', s)}, ${perSecond(other.name, s)})`;
      lines.push(ratioLine(`tree/${other.name} ${SHAPE_TEXT[s]}`, r, text));
      if (r.length > 0) summary.push(`${s} ${median(r).toFixed(2)} of ${other.name.replace(/^base /, '')}`);
    }
  }
  // Every other server as a share of the static one too: a bisect's table, PostgreSQL's figures.
  if (rates.has('static')) {
    for (const c of contestants.filter((x) => x.name !== 'tree' && x.name !== 'static')) {
      for (const s of shapes.filter((x) => x === 'cached' || x === 'first')) {
        const r = pairs(c.name, 'static', s);
        lines.push(ratioLine(`${c.name}/static ${SHAPE_TEXT[s]}`, r, `(${perSecond(c.name, s)}, ${perSecond('static', s)})`));
        if (c.name === 'tree postgres') summary.push(`postgres ${s} ${median(r).toFixed(2)} of static`);
      }
    }
  }
  // CPU per request, each contestant's, and the static server's as a share of the tree's (what the tree's rate would be, were CPU all).
  for (const s of shapes.filter((x) => x !== 'stream')) {
    for (const c of contestants.filter((x) => s !== 'uncached' || x.name !== 'static')) {
      const us = cpu.get(c.name)!.get(s)!;
      if (us.length === 0) continue;
      const sorted = [...us].sort((a, b) => a - b);
      lines.push(`cpu ${c.name} ${SHAPE_TEXT[s]}: ${median(us).toFixed(1)} us a request (range ${sorted[0]!.toFixed(1)}-${sorted.at(-1)!.toFixed(1)})`);
    }
    if (cpu.has('static') && s !== 'uncached') {
      for (const c of contestants.filter((x) => x.name !== 'static')) {
        const r = pairs('static', c.name, s, cpu);
        lines.push(ratioLine(`cpu static/${c.name} ${SHAPE_TEXT[s]}`, r, ''));
        if (c.name === 'tree') summary.push(`cpu ${s} ${median(r).toFixed(2)} of static`);
      }
    }
  }
  console.log([...lines, `bench:compare ${head} (${rounds} rounds of ${seconds} s, wrk ${CONNECTIONS} connections): ${summary.join(', ')}`].join('\n'));
}

await main();
