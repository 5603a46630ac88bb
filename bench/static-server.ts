/**
 * The transport limit: a plain node:http server on every core (node:cluster)
 * answering each path with bytes captured from the real server beforehand
 * (body, gzip body, headers). Whatever ledger-query does beyond this is the
 * cost of computing an answer; this server computes nothing.
 *
 * Run by the bench harness: node dist/bench/static-server.js MANIFEST_DIR
 * [WORKERS] (one per core by default; prints "listening at http://..." once
 * every worker listens).
 */
import cluster from 'node:cluster';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One answer of the real server, as it went over the wire. */
export interface CapturedAnswer {
  path: string;
  /** Whether the body is gzip-compressed (asked for with Accept-Encoding: gzip). */
  gzip: boolean;
  headers: Record<string, string>;
  body: Buffer;
}

interface ManifestEntry {
  path: string;
  gzip: boolean;
  headers: Record<string, string>;
  offset: number;
  length: number;
}

/** Answers 200 once a worker listens, whichever variants were captured. */
export const READY_PATH = '/__ready';

const INDEX = 'index.json';
const BODIES = 'bodies.bin';

/**
 * Writes answers where the static server's workers read them. A file rather
 * than IPC: every worker needs all of them, and pages of 1000 rows make a
 * few hundred MB, which is no message to clone per worker.
 */
export function writeManifest(dir: string, answers: readonly CapturedAnswer[]): void {
  mkdirSync(dir, { recursive: true });
  const entries: ManifestEntry[] = [];
  let offset = 0;
  for (const a of answers) {
    entries.push({ path: a.path, gzip: a.gzip, headers: a.headers, offset, length: a.body.length });
    offset += a.body.length;
  }
  writeFileSync(join(dir, BODIES), Buffer.concat(answers.map((a) => a.body), offset));
  writeFileSync(join(dir, INDEX), JSON.stringify(entries));
}

interface Variants {
  plain?: { headers: OutgoingHttpHeaders; body: Buffer };
  gzip?: { headers: OutgoingHttpHeaders; body: Buffer };
}

function loadManifest(dir: string): Map<string, Variants> {
  const entries = JSON.parse(readFileSync(join(dir, INDEX), 'utf8')) as ManifestEntry[];
  const bodies = readFileSync(join(dir, BODIES));
  const byPath = new Map<string, Variants>();
  for (const e of entries) {
    const body = bodies.subarray(e.offset, e.offset + e.length);
    // Content-Length computed once here, so a request costs a lookup and a write.
    const headers: OutgoingHttpHeaders = { ...e.headers, 'content-length': body.length };
    const variants = byPath.get(e.path) ?? {};
    variants[e.gzip ? 'gzip' : 'plain'] = { headers, body };
    byPath.set(e.path, variants);
  }
  return byPath;
}

function serveWorker(dir: string): void {
  const answers = loadManifest(dir);
  const server = createServer((req, res) => {
    if (req.url === READY_PATH) return void res.writeHead(200).end();
    const variants = answers.get(req.url ?? '');
    const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    const answer = (gzip ? variants?.gzip : undefined) ?? variants?.plain;
    if (answer === undefined) {
      // A path the harness did not capture: a 404 makes wrk's status count, and so the run, fail loudly.
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, answer.headers).end(answer.body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') process.send?.({ port: address.port });
  });
}

function servePrimary(workers: number): void {
  let listening = 0;
  cluster.on('message', (_worker, message: { port?: number }) => {
    // Workers calling listen(0) share the one port the primary picked for the first.
    if (typeof message.port === 'number' && ++listening === workers) {
      process.stdout.write(`static server (${workers} workers) listening at http://127.0.0.1:${message.port}\n`);
    }
  });
  cluster.on('exit', (_worker, code) => {
    if (code !== 0) {
      process.stderr.write(`static server worker exited with ${code}\n`);
      process.exit(1);
    }
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  process.once('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill();
    process.exit(0);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (dir === undefined) {
    process.stderr.write('usage: node dist/bench/static-server.js MANIFEST_DIR [WORKERS]\n');
    process.exit(2);
  }
  if (cluster.isPrimary) servePrimary(Number(process.argv[3] ?? availableParallelism()));
  else serveWorker(dir);
}
