/**
 * npm run bench:stream: GET /api/v2/stream/orders under many WebSocket
 * subscribers while the server ingests a simulated network live.
 *
 * A run starts `serve` (default settings but the two limits the subscribers
 * would hit, see serveArgs) on an empty store, ingesting NDJSON from its
 * stdin; in the "with" runs, subscribers (a third each: every order, the
 * busiest market, the busiest party) connect from separate client processes
 * (./stream-clients.ts) and take their snapshot; then this process writes the
 * network's blocks into serve's stdin at the network's pace, for --seconds.
 * Runs without subscribers and with each count of them alternate (--rounds
 * times: --subscribers 300,10000 runs 0, 300, 10000, 0, 300, 10000).
 *
 * What it measures, and how (also printed with the figures):
 * - Commit time: this process watches the store from outside the server, as
 *   another reader would: the embedded store's last block read every
 *   millisecond, PostgreSQL's commit notifications (the channel the writer
 *   notifies as it commits). A block's commit time is when it is first seen
 *   there (wall clock, performance.timeOrigin + now, shared by every process
 *   of the machine); the block times the network writes are not used.
 * - Delay: for each subscriber and each block it was owed a frame of, the
 *   arrival of the block's last frame minus its commit time.
 * - Every message delivered: what each filter was owed is read from the
 *   store's history after the run (the changes of each block, as the list
 *   shows them, batched 50 orders a frame) and checked equal to what this
 *   process sent; each subscriber's update frames and orders must equal it.
 * - Memory: serve's RSS (summed over its processes) before subscribers
 *   connect, once they have, and at its highest while streaming.
 * - Ingest: events committed per second over the run (the network's pace
 *   when ingestion keeps up) and the delay from writing a block into the
 *   pipe to its commit, beside the runs without subscribers.
 *
 * Usage: npm run bench:stream [-- --seconds 60 --subscribers 10000[,N...] --rounds 2
 *        --mix 1:1:1 (all:market:party) --client-processes 2 --cpu-prof DIR (serve's, with subscribers)
 *        --database-url postgres://.../postgres | --postgres (a throwaway server of the distribution's build)]
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { FRAME_ORDERS } from '../src/api/stream/frames.js';
import { busEventToJson } from '../src/ingest/json-codec.js';
import { simulateEvents } from '../src/simulate/simulate.js';
import { openStore } from '../src/store/open.js';
import { BLOCKS_CHANNEL } from '../src/store/postgres/block-watch.js';
import type { QueryStore, StoreConfig } from '../src/store/store.js';
import { distributionBuilds, embeddedBuilds, startPostgres, type RunningPostgres } from '../test/support/pg-server.js';
import { BENCH_DATA } from './dataset.js';
import { treeRss } from './load.js';
import { DELAY_BUCKET_MS, DELAY_BUCKETS, type FromClients, type KindReport, type SubscriberSpec, type ToClients } from './stream-clients.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const CLIENTS = fileURLToPath(new URL('./stream-clients.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const STREAM_PATH = '/api/v2/stream/orders';

const now = () => performance.timeOrigin + performance.now();
const log = (msg: string) => process.stderr.write(`${new Date().toISOString()} ${msg}\n`);

interface Options {
  seconds: number;
  /** Subscriber counts measured, each in its own runs. */
  subscribers: number[];
  rounds: number;
  blocksPerSecond: number;
  ordersPerBlock: number;
  clientProcesses: number;
  seed: number;
  /** Weights of the filter kinds (all, market, party) among the subscribers. */
  mix: number[];
  /** A folder for serve's CPU profiles of the runs with subscribers (node --cpu-prof). */
  cpuProf?: string;
}

/** One block of the network: its NDJSON, and what the stream owes for it. */
interface Block {
  height: number;
  text: string;
  events: number;
  /** Distinct (order, version) states it leaves, with their market and party: the changes a subscriber is owed. */
  changes: { marketId: string; partyId: string }[];
}

/** The simulated network's blocks, from height 1, timed as if made now at the network's pace. */
function network(o: Options, blocks: number): Block[] {
  const out: Block[] = [];
  let lines: string[] = [];
  let states = new Map<string, { marketId: string; partyId: string }>();
  const events = simulateEvents({
    seed: o.seed, blocks, ordersPerBlock: o.ordersPerBlock, repeatFirstHeight: false,
    startTime: BigInt(Date.now()) * 1_000_000n, blockIntervalNs: BigInt(Math.round(1e9 / o.blocksPerSecond)),
  });
  for (const e of events) {
    if (e.kind === 'beginBlock') {
      lines = [];
      states = new Map();
    }
    lines.push(JSON.stringify(busEventToJson(e)));
    if (e.kind === 'order') states.set(`${e.order.id} ${e.order.version}`, { marketId: e.order.marketId, partyId: e.order.partyId });
    if (e.kind === 'endBlock') out.push({ height: Number(e.height), text: lines.join('\n') + '\n', events: lines.length, changes: [...states.values()] });
  }
  return out;
}

/** The subscribers' filters: every order, the busiest market, the busiest party (not the network's own). */
function filterKinds(blocks: readonly Block[]): { kind: string; path: string; matches: (c: { marketId: string; partyId: string }) => boolean }[] {
  const count = (key: (c: Block['changes'][number]) => string | undefined) => {
    const m = new Map<string, number>();
    for (const b of blocks) for (const c of b.changes) {
      const k = key(c);
      if (k !== undefined) m.set(k, (m.get(k) ?? 0) + 1);
    }
    return [...m.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  };
  const market = count((c) => c.marketId);
  const party = count((c) => (c.partyId === 'network' ? undefined : c.partyId));
  return [
    { kind: 'all', path: STREAM_PATH, matches: () => true },
    { kind: 'market', path: `${STREAM_PATH}?marketIds=${market}`, matches: (c) => c.marketId === market },
    { kind: 'party', path: `${STREAM_PATH}?partyIds=${party}`, matches: (c) => c.partyId === party },
  ];
}

/** The filter kind of subscriber `s`: kinds interleaved in proportion to their weights. */
function kindOf(mix: readonly number[], s: number): number {
  const total = mix.reduce((a, b) => a + b, 0);
  let at = s % total;
  for (const [k, w] of mix.entries()) {
    if (at < w) return k;
    at -= w;
  }
  return 0;
}

/** How many of `subscribers` are of filter kind `k`. */
function subscribersOf(o: Options, subscribers: number, k: number): number {
  let n = 0;
  for (let s = 0; s < subscribers; s++) if (kindOf(o.mix, s) === k) n++;
  return n;
}

/** The command-line options naming a store. */
const storeArgs = (c: StoreConfig) => (c.databaseUrl ? ['--database-url', c.databaseUrl] : ['--data-dir', c.dataDir]);

/**
 * Each process's file descriptor limit raised to its hard limit through a
 * shell (Node cannot set its own): 10,000 sockets are past many systems'
 * default soft limit of 1024.
 */
const RAISE_FD_LIMIT = 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"';

function fdLimits(): { soft: number; hard: number } {
  const read = (flag: string) => {
    const r = spawnSyncText('sh', ['-c', `ulimit ${flag}`]);
    return r === 'unlimited' ? Infinity : Number(r);
  };
  return { soft: read('-Sn'), hard: read('-Hn') };
}

function spawnSyncText(cmd: string, args: string[]): string {
  return spawnSync(cmd, args, { encoding: 'utf8' }).stdout.trim();
}

interface Server {
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * serve on an empty store, ingesting NDJSON from its stdin. The limits per
 * client address and per process are raised past the subscribers (they all
 * come from 127.0.0.1, and node:cluster may hand one process more than half).
 */
async function startServe(config: StoreConfig, subscribers: number, cpuProf: string | undefined): Promise<Server> {
  const args = [...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []), CLI, 'serve', ...storeArgs(config), '--port', '0', '--source', '-',
    '--max-connections', String(subscribers + 100), '--max-streams-per-client', String(subscribers + 100)];
  const child = spawn('sh', ['-c', RAISE_FD_LIMIT, process.execPath, ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', LOG_REQUESTS: '0' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening at (http:\/\/[^"\s]+)/i.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code} before listening: ${out}`)));
  });
  child.stdout!.removeAllListeners('data');
  child.stdout!.resume();
  for (let i = 0; (await status(`${url}/health`)) !== 200; i++) {
    if (i > 2000) throw new Error(`${url}/health: no 200 within 10 s`);
    await sleep(5);
  }
  return {
    url, pid: child.pid!, child,
    async stop() {
      child.stdin!.end();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    request(url, (res) => { res.resume(); resolve(res.statusCode ?? 0); }).on('error', () => resolve(0)).end();
  });
}

/** When each height was first seen committed, from outside the server; stop() ends the watch. */
async function watchCommits(config: StoreConfig, store: QueryStore): Promise<{ committedAt: Map<number, number>; last: () => number; stop: () => Promise<void> }> {
  const committedAt = new Map<number, number>();
  let last = 0;
  const seen = (height: number) => {
    const t = now();
    for (let h = last + 1; h <= height; h++) committedAt.set(h, t);
    last = Math.max(last, height);
  };
  if (config.databaseUrl) {
    // The writer notifies as it commits, with the group's last height: delivered once the commit is done.
    const client = new pg.Client({ connectionString: config.databaseUrl });
    await client.connect();
    client.on('notification', (n) => seen(Number(n.payload)));
    await client.query(`LISTEN ${BLOCKS_CHANNEL}`);
    return { committedAt, last: () => last, stop: () => client.end() };
  }
  // A read of the embedded store's last block costs microseconds: asked every millisecond.
  const poll = setInterval(() => {
    void store.lastBlock().then((b) => { if (b && Number(b.height) > last) seen(Number(b.height)); });
  }, 1);
  return { committedAt, last: () => last, stop: async () => clearInterval(poll) };
}

/** CPU seconds (user + system) a process and its descendants have used. */
function treeCpu(pid: number): number {
  let ticks = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const p = pending.pop()!;
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
      for (const task of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) pending.push(Number(task));
    } catch {
      // Gone.
    }
  }
  return ticks / 100;
}

/** The client processes, each with its share of the subscribers. */
class Clients {
  private readonly procs: ChildProcess[] = [];
  private readonly waiting = new Map<ChildProcess, { resolve: (m: FromClients) => void; reject: (e: Error) => void }>();

  constructor(count: number) {
    for (let i = 0; i < count; i++) {
      const child = fork(CLIENTS, [], { execPath: 'sh', execArgv: ['-c', RAISE_FD_LIMIT, process.execPath], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child.on('message', (m: FromClients) => {
        const w = this.waiting.get(child);
        this.waiting.delete(child);
        w?.resolve(m);
      });
      child.once('exit', (code) => this.waiting.get(child)?.reject(new Error(`client process exited ${code}`)));
      this.procs.push(child);
    }
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid!);
  }

  /** Sends each process its message and waits for one answer from each. */
  ask(messages: (i: number) => ToClients): Promise<FromClients[]> {
    return Promise.all(this.procs.map((p, i) => new Promise<FromClients>((resolve, reject) => {
      this.waiting.set(p, { resolve, reject });
      p.send(messages(i));
    })));
  }

  stop(): void {
    for (const p of this.procs) p.kill('SIGKILL');
  }
}

const percentileOf = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

function histogramPercentile(histogram: readonly number[], total: number, p: number): number {
  const want = Math.ceil((total * p) / 100);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen >= want) return (i + 1) * DELAY_BUCKET_MS;
  }
  return NaN;
}

interface Delays { p50: number; p99: number; max: number; samples: number }

/** Percentiles of histograms of DELAY_BUCKET_MS buckets ([bucket, count] pairs), added up. */
function delays(histograms: readonly (readonly [number, number])[][]): Delays {
  const sum = new Array<number>(DELAY_BUCKETS).fill(0);
  for (const h of histograms) for (const [i, c] of h) sum[i] = (sum[i] ?? 0) + c;
  const samples = sum.reduce((s, c) => s + c, 0);
  let max = 0;
  sum.forEach((c, i) => { if (c > 0) max = i; });
  return { p50: histogramPercentile(sum, samples, 50), p99: histogramPercentile(sum, samples, 99), max: (max + 1) * DELAY_BUCKET_MS, samples };
}

interface RunResult {
  subscribers: number;
  connectSeconds: number;
  connectFailures: string;
  blocks: number;
  events: number;
  /** Events committed per second, first write to last commit. */
  ingestRate: number;
  writeToCommit: { p50: number; p99: number; max: number };
  rss: { before: number; connected: number; peak: number };
  serveCpu: number;
  clientCpu: number;
  /** Seconds from the first block's write until the subscribers had every frame: what the CPU seconds are spread over. */
  cpuWindow: number;
  seconds: number;
  /** The machine's 1-minute load average as the network started and as it ended (other work on a shared machine shows here). */
  load: [number, number];
  delay?: Delays & { unmatched: number; early: number };
  kinds?: Record<string, KindReport & { owedFrames: number; owedOrders: number }>;
  historyMatchesSent: boolean;
  /** Update frames the subscribers received per second, from the first block's write until they had every frame. */
  framesPerSecond?: number;
  mbPerSecond?: number;
}

async function freshStore(base: StoreConfig, run: number): Promise<StoreConfig> {
  if (!base.databaseUrl) {
    mkdirSync(BENCH_DATA, { recursive: true });
    return { dataDir: mkdtempSync(join(BENCH_DATA, `.stream-${run}-`)) };
  }
  const database = 'lq_bench_stream';
  const admin = new pg.Client({ connectionString: base.databaseUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base.databaseUrl);
  url.pathname = `/${database}`;
  return { dataDir: tmpdir(), databaseUrl: url.toString() };
}

async function run(o: Options, base: StoreConfig, n: number, blocks: readonly Block[], subscribers: number): Promise<RunResult> {
  const config = await freshStore(base, n);
  const server = await startServe(config, subscribers, subscribers > 0 ? o.cpuProf : undefined);
  const store = await openStore(config, { readOnly: true });
  const commits = await watchCommits(config, store);
  const kinds = filterKinds(blocks);
  let clients: Clients | undefined;
  try {
    await sleep(2000);
    const before = treeRss(server.pid).total;
    let connectSeconds = 0;
    let connectFailures = '';
    if (subscribers > 0) {
      clients = new Clients(o.clientProcesses);
      const share = (i: number): SubscriberSpec[] => {
        const specs: SubscriberSpec[] = [];
        for (let s = i; s < subscribers; s += o.clientProcesses) {
          const k = kinds[kindOf(o.mix, s)]!;
          specs.push({ kind: k.kind, path: k.path });
        }
        return specs;
      };
      log(`run ${n}: connecting ${subscribers} subscribers from ${o.clientProcesses} processes`);
      const answers = await clients.ask((i) => ({ type: 'connect', origin: server.url, subscribers: share(i), concurrency: 64 }));
      for (const a of answers) {
        if (a.type !== 'connected') throw new Error(`unexpected ${a.type}`);
        connectSeconds = Math.max(connectSeconds, a.seconds);
        if (a.failed > 0 || a.snapshots !== a.open) connectFailures += `${a.failed} failed, ${a.open - a.snapshots} open without a snapshot (${a.firstError}); `;
      }
      log(`run ${n}: connected in ${connectSeconds.toFixed(1)} s ${connectFailures}`);
      await sleep(2000);
    }
    const connected = treeRss(server.pid).total;
    const load0 = loadavg()[0]!;
    const cpu0 = treeCpu(server.pid);
    const clientCpu0 = clients?.pids.reduce((s, p) => s + treeCpu(p), 0) ?? 0;
    let peak = connected;
    const sampler = setInterval(() => { peak = Math.max(peak, treeRss(server.pid).total); }, 1000);
    // The network: block i written at its time, by the clock, whatever the previous write cost.
    const writtenAt = new Map<number, number>();
    const t0 = now() + 100;
    for (const [i, b] of blocks.entries()) {
      const wait = t0 + (i * 1000) / o.blocksPerSecond - now();
      if (wait > 0) await sleep(wait);
      writtenAt.set(b.height, now());
      server.child.stdin!.write(b.text);
    }
    const lastHeight = blocks.at(-1)!.height;
    for (let i = 0; commits.last() < lastHeight; i++) {
      if (i > 600) throw new Error(`block ${lastHeight} not committed within 60 s of its write (last seen ${commits.last()})`);
      await sleep(100);
    }
    // What each filter was owed, from the store's history; checked against what was sent.
    const history = await store.orderChanges(0n, BigInt(lastHeight), blocks.length + 1);
    const byHeight = new Map(history.map((h) => [Number(h.height), h.changes]));
    let historyMatchesSent = true;
    const owed: Record<string, number[]> = {};
    const owedOrders: Record<string, number> = {};
    for (const k of kinds) {
      owed[k.kind] = [];
      owedOrders[k.kind] = 0;
      for (const b of blocks) {
        const stored = (byHeight.get(b.height) ?? []).filter(k.matches).length;
        if (stored !== b.changes.filter(k.matches).length) historyMatchesSent = false;
        owedOrders[k.kind]! += stored;
        for (let f = 0; f < Math.ceil(stored / FRAME_ORDERS); f++) owed[k.kind]!.push(b.height);
      }
    }
    // Subscribers drained: every frame owed received, or none for 10 s (at most 5 minutes).
    if (clients) {
      const owedFrames = kinds.reduce((sum, k) => sum + owed[k.kind]!.length * subscribersOf(o, subscribers, kinds.indexOf(k)), 0);
      for (let i = 0; i < 600; i++) {
        const p = await clients.ask(() => ({ type: 'progress' }));
        const frames = p.reduce((sum, m) => sum + (m.type === 'progress' ? m.frames : 0), 0);
        const last = Math.max(...p.map((m) => (m.type === 'progress' ? m.lastFrameAt : 0)));
        if (frames >= owedFrames || now() - last > 10_000) break;
        await sleep(500);
      }
    }
    clearInterval(sampler);
    const cpuWindow = (now() - t0) / 1000;
    const serveCpu = treeCpu(server.pid) - cpu0;
    const clientCpu = (clients?.pids.reduce((s, p) => s + treeCpu(p), 0) ?? 0) - clientCpu0;
    peak = Math.max(peak, treeRss(server.pid).total);
    const seconds = (commits.committedAt.get(lastHeight)! - writtenAt.get(blocks[0]!.height)!) / 1000;
    const events = blocks.reduce((s, b) => s + b.events, 0);
    const w2c = blocks.map((b) => commits.committedAt.get(b.height)! - writtenAt.get(b.height)!).sort((a, b) => a - b);

    const result: RunResult = {
      subscribers, connectSeconds, connectFailures, blocks: blocks.length, events, ingestRate: events / seconds,
      writeToCommit: { p50: percentileOf(w2c, 50), p99: percentileOf(w2c, 99), max: w2c.at(-1)! },
      rss: { before, connected, peak }, serveCpu, clientCpu, cpuWindow, seconds, historyMatchesSent, load: [load0, loadavg()[0]!],
    };
    if (clients) {
      const committedAt = Object.fromEntries(commits.committedAt);
      const answers = await clients.ask(() => ({ type: 'finish', owed, owedOrders, committedAt }));
      let unmatched = 0;
      const merged: NonNullable<RunResult['kinds']> = {};
      for (const a of answers) {
        if (a.type !== 'finished') throw new Error(`unexpected ${a.type}`);
        unmatched += a.unmatched;
        for (const [kind, r] of Object.entries(a.kinds)) {
          const m = (merged[kind] ??= {
            subscribers: 0, exact: 0, faults: [], frames: 0, orders: 0, bytes: 0, histogram: [], samples: 0, early: 0,
            owedFrames: owed[kind]!.length, owedOrders: owedOrders[kind]!,
          });
          m.subscribers += r.subscribers;
          m.exact += r.exact;
          m.frames += r.frames;
          m.orders += r.orders;
          m.bytes += r.bytes;
          m.samples += r.samples;
          m.early += r.early;
          m.histogram.push(...r.histogram);
          m.faults.push(...r.faults.slice(0, 3 - m.faults.length));
        }
      }
      const all = Object.values(merged);
      result.delay = { ...delays(all.map((k) => k.histogram)), unmatched, early: all.reduce((s, k) => s + k.early, 0) };
      result.kinds = merged;
      const frames = Object.values(merged).reduce((s, k) => s + k.frames, 0);
      const bytes = Object.values(merged).reduce((s, k) => s + k.bytes, 0);
      // Over the time the subscribers took them, which is longer than the network ran when serve falls behind.
      result.framesPerSecond = frames / cpuWindow;
      result.mbPerSecond = bytes / cpuWindow / 1e6;
    }
    return result;
  } finally {
    clients?.stop();
    await commits.stop();
    await store.close();
    await server.stop();
    if (!config.databaseUrl) rmSync(config.dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

function report(o: Options, backend: string, results: readonly RunResult[], blocks: readonly Block[]): string {
  const kinds = filterKinds(blocks);
  const changes = mean(blocks.map((b) => b.changes.length));
  const without = results.filter((r) => r.subscribers === 0);
  const withSubs = results.filter((r) => r.subscribers > 0);
  // The store's own growth while ingesting (its caches filling) is no subscriber's: taken out with the runs without any.
  const growth = without.length > 0 ? mean(without.map((r) => r.rss.peak - r.rss.before)) : 0;
  const perSubscriber = (r: RunResult) => ((r.rss.peak - r.rss.before - growth) * 1024) / r.subscribers;
  const rows = results.map((r, i) => [
    String(i + 1), fmt(r.subscribers), fmt(r.ingestRate), `${fmt(r.writeToCommit.p50, 1)} / ${fmt(r.writeToCommit.p99, 1)}`,
    r.delay ? `${fmt(r.delay.p50, 1)} / ${fmt(r.delay.p99, 1)} / ${fmt(r.delay.max, 0)}` : '-',
    r.kinds ? Object.values(r.kinds).every((k) => k.exact === k.subscribers) && r.historyMatchesSent ? 'all' : 'NO' : '-',
    `${fmt(r.rss.before)} / ${fmt(r.rss.connected)} / ${fmt(r.rss.peak)}`,
    r.subscribers > 0 ? `${fmt(((r.rss.connected - r.rss.before) * 1024) / r.subscribers, 1)} / ${fmt(perSubscriber(r), 1)}` : '-',
    fmt(r.serveCpu / r.cpuWindow, 2), r.subscribers > 0 ? fmt(r.clientCpu / r.cpuWindow, 2) : '-',
    r.framesPerSecond === undefined ? '-' : `${fmt(r.framesPerSecond)} / ${fmt(r.mbPerSecond!, 1)}`,
    `${fmt(r.load[0], 1)} / ${fmt(r.load[1], 1)}`,
  ]);
  const header = ['run', 'subscribers', 'ingest events/s', 'write→commit p50/p99 ms', 'commit→client p50/p99/max ms', 'delivered',
    'serve RSS MB before/connected/peak', 'KB per subscriber connected/streaming', 'serve CPU cores', 'clients CPU cores', 'frames/s / MB/s received', 'load avg start/end'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const table = [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
  const delivery = withSubs.flatMap((r, i) => Object.entries(r.kinds ?? {}).map(([k, v]) => {
    const d = delays([v.histogram]);
    return `- run ${results.indexOf(r) + 1}, ${k}: ${fmt(v.exact)} of ${fmt(v.subscribers)} subscribers got exactly their ${fmt(v.owedFrames)} update frames and ${fmt(v.owedOrders)} orders` +
      (v.faults.length > 0 ? ` (not: ${v.faults.join('; ')})` : '') +
      `; commit→client p50 ${fmt(d.p50, 1)} ms, p99 ${fmt(d.p99, 1)} ms over ${fmt(d.samples)} (subscriber, block) pairs` +
      (v.early > 0 ? `, ${fmt(v.early)} of them received before the harness saw the commit` : '');
  }));
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return [
    `# npm run bench:stream: ${backend}`,
    '',
    `${new Date().toISOString()}, Node ${process.version}, ${availableParallelism()} cores (shared machine: compare the runs of one report).`,
    `Network: ${o.blocksPerSecond} blocks/s for ${o.seconds} s (${blocks.length} blocks, ${fmt(changes, 1)} order changes and ${fmt(mean(blocks.map((b) => b.events)), 0)} events a block on average, ` +
      `simulate --orders-per-block ${o.ordersPerBlock}, seed ${o.seed}), written as NDJSON into serve's stdin at the network's pace.`,
    `Subscribers: WebSocket, from ${o.clientProcesses} client processes, ${kinds.map((k, i) => `\`${k.path.replace(/=(\w{8})\w+/, '=$1…')}\` (${o.mix[i]}/${o.mix.reduce((a, b) => a + b, 0)})`).join(', ')}; ` +
      'serve with its defaults (one HTTP process per core, the first also ingests) but --max-connections and --max-streams-per-client raised past the subscribers.',
    'Commit time: when this harness first saw the block committed, from outside serve: the embedded store\'s last block read every 1 ms (its moment up to ~1 ms late), ' +
      'PostgreSQL\'s commit notification (sent by the writer\'s transaction, delivered once it committed).',
    'commit→client: for each subscriber and each block it was owed frames of, the arrival of the block\'s last frame minus the commit time (wall clock shared by the processes).',
    'Delivered: each subscriber\'s update frames counted and compared with what its filter was owed, read from the store\'s history after the run ' +
      `(batched ${FRAME_ORDERS} orders a frame, as the stream does) and checked equal to what the harness sent${results.every((r) => r.historyMatchesSent) ? ' (it was, in every run)' : ' (it was NOT in some run)'}; ` +
      'the orders of one control subscriber per filter and client process counted and compared too, and every other subscriber of that filter must have ' +
      'received exactly the control\'s bytes; no subscriber may have been closed or sent an error.',
    'Ingest: events committed per second from the first block\'s write to the last block\'s commit (the network\'s pace when ingestion keeps up), and each block\'s write→commit delay.',
    'RSS: serve\'s VmRSS summed over its processes, before subscribers connect, once they have, and at its highest while streaming (sampled every second). ' +
      'KB per subscriber: connected = (connected − before) / subscribers; streaming = (peak − before − the same growth in the runs without subscribers) / subscribers.',
    'CPU: cores used on average from the first block\'s write until every frame was received (user + system seconds / those seconds). Load avg: the machine\'s 1-minute load average (2 cores; above 2, other work waited for them too).',
    '',
    table,
    '',
    ...delivery,
    '',
    '## Goals (issue 22)',
    '',
    ...o.subscribers.flatMap((count) => {
      const runs = withSubs.filter((r) => r.subscribers === count);
      const ratio = without.length > 0 ? mean(runs.map((r) => r.ingestRate)) / mean(without.map((r) => r.ingestRate)) : NaN;
      const p99 = Math.max(...runs.map((r) => r.delay?.p99 ?? NaN));
      const perSub = Math.max(...runs.map(perSubscriber));
      const connected = Math.max(...runs.map((r) => ((r.rss.connected - r.rss.before) * 1024) / r.subscribers));
      return [
        `- ${fmt(count)} subscribers: every message delivered: ${verdict(runs.every((r) => r.historyMatchesSent && Object.values(r.kinds ?? {}).every((k) => k.exact === k.subscribers)))}`,
        `- ${fmt(count)} subscribers: commit→client p99 <= 100 ms: ${verdict(p99 <= 100)} (highest p99 of its runs ${fmt(p99, 1)} ms)`,
        `- ${fmt(count)} subscribers: RSS <= 20 KB per subscriber: ${verdict(perSub <= 20)} while streaming (${fmt(perSub, 1)} KB), ${verdict(connected <= 20)} connected (${fmt(connected, 1)} KB)`,
        `- ${fmt(count)} subscribers: ingest rate >= 0.9 of the runs without subscribers: ${verdict(ratio >= 0.9)} (${fmt(ratio, 3)}, means of the alternated runs)`,
      ];
    }),
    '',
  ].join('\n');
}

async function postgresServer(url: string | undefined, start: boolean): Promise<{ url?: string; server?: RunningPostgres; name: string }> {
  if (url) return { url, name: 'PostgreSQL (--database-url)' };
  if (!start) return { name: 'embedded store' };
  const build = distributionBuilds()[0] ?? embeddedBuilds()[0];
  if (!build) throw new Error('--postgres: no PostgreSQL build on this machine');
  const server = await startPostgres(build);
  log(`started ${server.version}`);
  return { url: server.url, server, name: server.version.replace(/ on .*/, '') };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' }, subscribers: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '2' },
      'database-url': { type: 'string' }, postgres: { type: 'boolean' }, 'client-processes': { type: 'string', default: '2' },
      'orders-per-block': { type: 'string', default: '18' }, mix: { type: 'string', default: '1:1:1' }, 'cpu-prof': { type: 'string' }, 'blocks-per-second': { type: 'string', default: '10' }, seed: { type: 'string', default: '7' },
    },
  });
  const o: Options = {
    seconds: Number(values.seconds), subscribers: values.subscribers!.split(',').map(Number), rounds: Number(values.rounds),
    blocksPerSecond: Number(values['blocks-per-second']), ordersPerBlock: Number(values['orders-per-block']),
    clientProcesses: Number(values['client-processes']), seed: Number(values.seed), mix: values.mix!.split(':').map(Number),
    ...(values['cpu-prof'] === undefined ? {} : { cpuProf: values['cpu-prof'] }),
  };
  if (o.mix.length !== 3 || o.mix.some((w) => !Number.isInteger(w) || w < 0) || o.mix.every((w) => w === 0)) {
    throw new Error(`--mix ${values.mix}: three whole weights, all:market:party (e.g. 1:1:1)`);
  }
  const limits = fdLimits();
  const most = Math.max(...o.subscribers);
  if (o.subscribers.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--subscribers ${values.subscribers}: whole numbers, comma-separated`);
  if (limits.hard < most + 200) {
    log(`file descriptors: the hard limit is ${limits.hard}, and serve may need ${most + 200}: raise it (as root: ulimit -Hn ${most + 1000}, or LimitNOFILE= / limits.conf) or ask for fewer --subscribers`);
  }
  const pgServer = await postgresServer(values['database-url'] ?? (process.env.DATABASE_URL || undefined), values.postgres === true);
  const base: StoreConfig = pgServer.url ? { dataDir: tmpdir(), databaseUrl: pgServer.url } : { dataDir: BENCH_DATA };
  try {
    const blocks = network(o, o.seconds * o.blocksPerSecond);
    log(`network: ${blocks.length} blocks, ${mean(blocks.map((b) => b.changes.length)).toFixed(1)} order changes a block; file descriptors: soft ${limits.soft}, hard ${limits.hard} (children raise theirs to the hard limit)`);
    const results: RunResult[] = [];
    for (let r = 0; r < o.rounds; r++) {
      for (const subscribers of [0, ...o.subscribers]) {
        const n = results.length + 1;
        log(`run ${n}: ${subscribers} subscribers, ${pgServer.name}`);
        const result = await run(o, base, n, blocks, subscribers);
        log(`run ${n}: ingest ${result.ingestRate.toFixed(0)} events/s` + (result.delay ? `, delay p50 ${result.delay.p50.toFixed(1)} p99 ${result.delay.p99.toFixed(1)} ms` : ''));
        results.push(result);
        log(`run ${n}: ${JSON.stringify({ ...result, kinds: Object.fromEntries(Object.entries(result.kinds ?? {}).map(([k, v]) => [k, { ...v, histogram: delays([v.histogram]) }])) })}`);
      }
    }
    const text = report(o, pgServer.name, results, blocks);
    console.log(text);
    mkdirSync(RESULTS, { recursive: true });
    const stem = join(RESULTS, `${new Date().toISOString().slice(0, 10)}-stream-${pgServer.url ? 'postgres' : 'embedded'}`);
    let file = `${stem}.md`;
    for (let i = 2; existsSync(file); i++) file = `${stem}-${i}.md`;
    writeFileSync(file, text);
    log(`written to ${file}`);
  } finally {
    await pgServer.server?.stop();
  }
}

await main();
