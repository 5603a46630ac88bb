/**
 * `npm run soak -- --distinct-urls N` (issue 33): the memory of each HTTP
 * process of `serve --workers 2` over the real recording while clients send
 * N distinct URLs of ~12 KB, none asked twice, beside streams that never
 * read. The mix, in turns: a list of ~180 party ids (answered: an empty
 * page, kept in the answer cache), the same list with one id bad (refused),
 * a bogus parameter of 12 KB (ignored, answered), a path no route has
 * (refused 404). Every --sample-every URLs one line: URLs sent, statuses,
 * each process's VmRSS (serve first, then its HTTP processes) and the load.
 * PASS when every HTTP process stays under --ceiling-mb (200) throughout and
 * the group's growth (the sum of every process's, from before the first URL
 * to the end) is under the same figure; else FAIL, exit status 1.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DATA } from './dataset.js';
import { processRss, processTree, startProcess } from './load.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
export const RECORDING = fileURLToPath(new URL('../../../shared/fixtures/system_tests.evt.gz', import.meta.url));

export interface UrlSoakOptions {
  urls: number;
  connections: number;
  sampleEvery: number;
  ceilingMb: number;
  /** WebSocket-less HTTP streams opened and never read, held throughout. */
  idleStreams: number;
  /** Extra environment of serve (say, NODE_OPTIONS) to compare settings. */
  env: NodeJS.ProcessEnv;
}

const URL_BYTES = 12 << 10;
const hexId = () => randomBytes(32).toString('hex');

/** The i-th URL of the mix: distinct by its random ids or text, ~12 KB each. */
export function hostileUrl(i: number): string {
  const ids = () => {
    const out: string[] = [];
    for (let n = 0; n < URL_BYTES; n += 65) out.push(hexId());
    return out;
  };
  switch (i % 4) {
    case 0: return `/api/v2/orders?filter.partyIds=${ids().join(',')}`;
    case 1: return `/api/v2/orders?filter.partyIds=${[...ids().slice(1), 'zz'].join(',')}`;
    case 2: return `/api/v2/orders?pagination.first=10&bogus=${randomBytes(URL_BYTES / 2).toString('hex')}`;
    default: return `/api/v2/nowhere/${randomBytes(URL_BYTES / 2).toString('hex')}`;
  }
}

/** A stream request whose answer is never read: its socket's buffers fill up to what the server allows. */
function idleStream(origin: string, agent: Agent): void {
  const req = request(`${origin}/api/v2/stream/orders`, { agent }, (res) => res.pause());
  req.on('error', () => undefined);
  req.end();
}

function get(origin: string, path: string, agent: Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = request(origin + path, { agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', () => resolve(-1));
    req.setTimeout(30_000, () => req.destroy());
    req.end();
  });
}

const mb = (n: number) => n.toFixed(0);
const log = (msg: string) => process.stdout.write(`${msg}\n`);

export async function urlSoak(o: UrlSoakOptions): Promise<boolean> {
  const dir = join(BENCH_DATA, `soak-urls-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'store');
  const ingested = spawnSync(process.execPath, [CLI, 'ingest', RECORDING, '--data-dir', dataDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (ingested.status !== 0) throw new Error(`ingest of ${RECORDING} exited ${ingested.status}`);
  const server = await startProcess([CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--workers', '2'], '/health', o.env);
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections });
  const streams = new Agent({ keepAlive: false, maxSockets: Infinity });
  try {
    const memory = () => processTree(server.pid).map((p) => processRss(p).total);
    // Every HTTP process warmed with a few ordinary pages first, so that growth is the mix's and not the first answers'.
    for (let i = 0; i < 200; i++) await get(server.url, `/api/v2/orders?pagination.first=${1 + (i % 50)}`, agent);
    for (let i = 0; i < o.idleStreams; i++) idleStream(server.url, streams);
    const before = memory();
    log(`serve --workers 2 (${Object.entries(o.env).map(([k, v]) => `${k}=${v}`).join(' ') || 'default settings'}) over ${RECORDING}; ` +
      `${o.urls} distinct ~12 KB URLs over ${o.connections} connections, ${o.idleStreams} streams never read; ` +
      `VmRSS MB, serve first: ${before.map(mb).join(' + ')}; load ${loadavg()[0]!.toFixed(1)}`);
    const statuses = new Map<number, number>();
    const peak = before.map(() => 0);
    let sent = 0;
    let answered = 0;
    const worker = async () => {
      while (sent < o.urls) {
        const status = await get(server.url, hostileUrl(sent++), agent);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (++answered % o.sampleEvery === 0) {
          const now = memory();
          now.forEach((m, i) => (peak[i] = Math.max(peak[i] ?? 0, m)));
          log(`${String(answered).padStart(6)} URLs  ${JSON.stringify(Object.fromEntries(statuses))}  VmRSS ${now.map(mb).join(' + ')} MB  load ${loadavg()[0]!.toFixed(1)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: o.connections }, worker));
    const end = memory();
    const growth = end.reduce((a, m, i) => a + m - (before[i] ?? 0), 0);
    const httpPeaks = peak.slice(1);
    const under = httpPeaks.every((p) => p < o.ceilingMb) && growth < o.ceilingMb;
    log(`summary (${new Date().toISOString()}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}): HTTP processes' peak VmRSS ` +
      `${httpPeaks.map(mb).join(', ')} MB; at the end ${end.map(mb).join(' + ')} MB; the group grew ${mb(growth)} MB`);
    log(`${under ? 'PASS' : 'FAIL'}: every HTTP process under ${o.ceilingMb} MB and the group's growth under ${o.ceilingMb} MB`);
    return under;
  } finally {
    agent.destroy();
    streams.destroy();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
