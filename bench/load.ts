/**
 * The bench harness's processes: servers started and stopped, their memory,
 * wrk as the load generator (its own process, so it shares a process with
 * neither the server nor the raw query loop), and answers captured over HTTP.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CapturedAnswer } from './static-server.js';

export interface Measure {
  rate: number;
  /** Requests answered in the measurement. */
  requests: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
}

export interface RunningServer {
  url: string;
  pid: number;
  /** From spawn to the first 200 of `readyPath`, ms. */
  startMs: number;
  stop(): Promise<void>;
}

/**
 * Starts `node args...`, waits for its "listening at URL" line, then asks
 * `readyPath` until it answers 200: the time to the first answer, which is
 * what a restarted instance behind a load balancer costs.
 */
export async function startProcess(args: string[], readyPath: string, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const started = performance.now();
  // The listening line is logged at info, the default level: a LOG_LEVEL inherited from the caller's shell would hide it.
  const child = spawn(process.execPath, args, {
    env: { ...process.env, LOG_LEVEL: 'info', LOG_REQUESTS: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  const onData = (d: Buffer) => { out += d.toString(); };
  child.stdout.on('data', onData);
  let timer: NodeJS.Timeout | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /listening at (http:\/\/[^"\s]+)/i.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before listening: ${out}`)));
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')}: no "listening at" line within 120 s: ${out}`));
    }, 120_000);
  }).finally(() => clearTimeout(timer));
  // From here on its output is drained unread: scanning a log that grows for as long as the server runs would cost this process CPU the measurements need.
  child.stdout.removeAllListeners('data');
  child.stdout.resume();
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      request(url + readyPath, (res) => { res.resume(); resolve(res.statusCode ?? 0); }).on('error', () => resolve(0)).end();
    });
    if (status === 200) break;
    if (performance.now() - started > 120_000) throw new Error(`${url}${readyPath}: no 200 within 120 s (last ${status})`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const startMs = performance.now() - started;
  return {
    url, pid: child.pid!, startMs,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Rss {
  /** VmRSS, MB: what the process holds in memory, mapped store pages included. */
  total: number;
  /** RssAnon, MB: its heap and stacks alone, without the file pages the OS can drop. */
  anon: number;
  /**
   * Pss, MB: each page divided among the processes that share it (the
   * program's code and libraries, mapped by every worker). Summed over
   * processes, it is what the server takes from the machine; VmRSS summed
   * counts a shared page once per process.
   */
  pss: number;
}

/** A process and all its descendants, parents first; empty once it has ended. */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const p = pending.shift()!;
    try {
      const children = readdirSync(`/proc/${p}/task`).map((task) => readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim());
      out.push(p);
      for (const c of children) if (c) pending.push(...c.split(/\s+/).map(Number));
    } catch {
      // The process ended between two reads.
    }
  }
  return out;
}

/** The memory of one process, MB; zeros once it has ended. */
export function processRss(pid: number): Rss {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (re: RegExp, text: string) => Number(re.exec(text)?.[1] ?? 0) / 1024;
    return {
      total: kib(/^VmRSS:\s+(\d+)/m, status),
      anon: kib(/^RssAnon:\s+(\d+)/m, status),
      pss: kib(/^Pss:\s+(\d+)/m, readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')),
    };
  } catch {
    return { total: 0, anon: 0, pss: 0 };
  }
}

/**
 * Resident memory of a process and all its descendants: a server that
 * answers on several cores (workers) is measured whole. Pages shared between
 * them are counted once per process in `total`, so for several processes it
 * is an upper bound; `pss` counts them once.
 */
export function treeRss(pid: number): Rss {
  const sum: Rss = { total: 0, anon: 0, pss: 0 };
  for (const p of processTree(pid)) {
    const r = processRss(p);
    sum.total += r.total;
    sum.anon += r.anon;
    sum.pss += r.pss;
  }
  return sum;
}

/** Clock ticks a second of /proc/PID/stat's times (USER_HZ: 100 on every Linux the bench runs on). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user and system) a process and its descendants have used so
 * far, from /proc/PID/stat: a measure of work that the machine's other load
 * does not stretch, as it stretches time (an HTTP process preempted waits
 * without counting).
 */
export function treeCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      // The fields after the command's name (which may hold spaces), from the third: utime is the 14th, stime the 15th.
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between two reads.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** Fails with the install line when wrk is missing, before anything slow starts. */
export function checkWrk(): void {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (r.error !== undefined) {
    throw new Error('npm run bench drives the server with wrk, which is not installed: apt-get install wrk (Debian/Ubuntu), brew install wrk (macOS)');
  }
}

/**
 * Each request is the next path of the list, pre-formatted once in init (so
 * the Lua side costs next to nothing per request); threads start at different
 * places. done() prints one line the harness parses.
 */
const WRK_SCRIPT = `
local counter = 0
function setup(thread)
  thread:set("offset", counter)
  counter = counter + 1
end
local requests = {}
local n = 0
local i = 0
function init(args)
  for line in io.lines(args[1]) do
    n = n + 1
    requests[n] = wrk.format(nil, line)
  end
  i = ((offset or 0) * 7919) % n
end
function request()
  i = i % n + 1
  return requests[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration":%d,"p50":%.1f,"p99":%.1f,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;

interface WrkResult {
  requests: number;
  /** Microseconds, as are the percentiles. */
  duration: number;
  p50: number;
  p99: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
}

export interface LoadOptions {
  seconds: number;
  connections: number;
  threads: number;
  gzip: boolean;
}

/** wrk against `origin`, rotating through `paths`; any error or non-2xx answer fails the measurement. */
export async function wrk(origin: string, paths: readonly string[], o: LoadOptions): Promise<Measure> {
  const dir = mkdtempSync(join(tmpdir(), 'lq-wrk-'));
  try {
    writeFileSync(join(dir, 'rotate.lua'), WRK_SCRIPT);
    writeFileSync(join(dir, 'paths'), paths.join('\n') + '\n');
    const args = [
      '-t', String(o.threads), '-c', String(o.connections), '-d', `${o.seconds}s`, '--timeout', '10s',
      '-s', join(dir, 'rotate.lua'), ...(o.gzip ? ['-H', 'Accept-Encoding: gzip'] : []),
      origin, '--', join(dir, 'paths'),
    ];
    const { stdout } = await promisify(execFile)('wrk', args, { maxBuffer: 16 << 20 });
    const line = /WRK_RESULT (\{.*\})/.exec(stdout)?.[1];
    if (line === undefined) throw new Error(`wrk printed no result: ${stdout}`);
    const r = JSON.parse(line) as WrkResult;
    const errors = r.connect + r.read + r.write + r.status + r.timeout;
    if (errors > 0) throw new Error(`${origin}${paths[0]}: wrk counted errors ${line}`);
    return { rate: r.requests / (r.duration / 1e6), requests: r.requests, p50: r.p50 / 1000, p99: r.p99 / 1000 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Headers a server sets per connection or per moment, which a replay must not repeat. */
const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** Each path's answer, as the real server sends it (gzip-compressed when asked), a few at a time. */
export async function capture(origin: string, paths: readonly string[], gzip: boolean): Promise<CapturedAnswer[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const one = (path: string) => new Promise<CapturedAnswer>((resolve, reject) => {
    const req = request(origin + path, { agent, headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode} ${Buffer.concat(chunks).toString()}`));
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined && !NOT_REPLAYED.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
        }
        resolve({ path, gzip, headers, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject).end();
  });
  try {
    const answers: CapturedAnswer[] = [];
    for (let i = 0; i < paths.length; i += 4) answers.push(...await Promise.all(paths.slice(i, i + 4).map(one)));
    return answers;
  } finally {
    agent.destroy();
  }
}
