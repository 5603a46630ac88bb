/**
 * The processes of `ledger-query serve`. With one worker, one process answers
 * and (with a source) ingests in a thread of its own. With more, this process
 * is the primary: it migrates, ingests (still exactly one writer), and forks
 * HTTP workers (./serve-worker.ts) that share the port, each with a read-only
 * connection of its own, so queries use every core. Readers never see half a
 * block: each block commits in one transaction.
 */
import cluster, { type Worker } from 'node:cluster';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { startBackgroundIngest, type BackgroundIngest, type IngestStatus } from './ingest/background.js';
import { openStore, type StoreConfig } from './store/open.js';
import { SchemaVersionError } from './store/store.js';

export interface LiveSource {
  spec: string;
  follow: boolean;
  allowGaps: boolean;
}

export interface ServeOptions {
  store: StoreConfig;
  host: string;
  port: number;
  /** HTTP processes; 1 answers in this process. */
  workers: number;
  /** Ingest from this source while serving. */
  live?: LiveSource | undefined;
  /** Never migrate or write: a PostgreSQL role may have SELECT only, or the database be a replica. */
  readOnly: boolean;
  /** Bytes of answers each HTTP process keeps until the next block (0: none); the server's default if absent. */
  answerCacheBytes?: number | undefined;
}

/** What the primary hands each HTTP worker. */
export interface WorkerSetup {
  store: StoreConfig;
  host: string;
  port: number;
  /** The source the primary ingests from, if any: workers report how that goes. */
  source: string | undefined;
  answerCacheBytes: number | undefined;
}

/** A worker asks the primary how ingestion goes; the primary answers with the same id. */
export type WorkerMessage = { type: 'ingestStatus?'; id: number };
export type PrimaryMessage = { type: 'ingestStatus'; id: number; status: IngestStatus };

const logLevel = () => process.env.LOG_LEVEL ?? 'info';
const logRequests = () => process.env.LOG_REQUESTS === '1';

/** Checks (and unless readOnly, creates or migrates) the store before anyone serves it. */
async function prepareStore(o: ServeOptions): Promise<void> {
  if (o.readOnly && o.store.databaseUrl === undefined && !existsSync(join(o.store.dataDir, 'ledger.db'))) {
    throw new SchemaVersionError(`no ledger-query store in ${o.store.dataDir}: ingest into it, or serve without --no-ingest, once to create it`);
  }
  if (!o.readOnly) await (await openStore(o.store)).close();
  // A read-only instance checks the schema as it opens.
  else await (await openStore(o.store, { readonly: true })).close();
}

/** Serves until SIGINT or SIGTERM; resolves with the address once listening. */
export async function serve(o: ServeOptions): Promise<string> {
  await prepareStore(o);
  return o.workers <= 1 ? serveHere(o) : servePrimary(o);
}

async function serveHere(o: ServeOptions): Promise<string> {
  // Loaded here: a primary of HTTP workers answers nothing itself, and starts them the sooner without it.
  const { buildServer } = await import('./api/server.js');
  const store = await openStore(o.store, { readonly: true });
  let ingestion: BackgroundIngest | undefined;
  const app = await buildServer({
    store, logger: { level: logLevel() }, logRequests: logRequests(), answerCacheBytes: o.answerCacheBytes,
    ingestStatus: o.live && (() => ingestion!.status()),
  });
  ingestion = o.live && startBackgroundIngest({
    store: o.store, ...o.live,
    onLog: (level, msg) => app.log[level](msg),
    onListening: (a) => app.log.info(`waiting for the core to connect to socket://${a.host}:${a.port}`),
  });
  const close = async () => {
    await ingestion?.stop();
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  return app.listen({ host: o.host, port: o.port });
}

/**
 * Node's flags for the HTTP workers: this process's, and V8's young
 * generation in semi-spaces of 2 MB rather than 16, unless the user set
 * them. In alternated runs on the 1M-order store the smaller one saved 20-40
 * MB per worker; uncached pages of 50 ran within noise, pages of 1000 at ~0.8x
 * (BENCHMARKS.md, "Smaller HTTP workers").
 */
function workerExecArgv(): string[] {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  // V8 takes its flags with dashes or underscores.
  if (given.some((flag) => flag.replaceAll('_', '-').startsWith('--max-semi-space-size'))) return process.execArgv;
  return [...process.execArgv, '--max-semi-space-size=2'];
}

async function servePrimary(o: ServeOptions): Promise<string> {
  const log = pino({ level: logLevel() });
  const ingestion = o.live && startBackgroundIngest({
    store: o.store, ...o.live,
    onLog: (level, msg) => log[level](msg),
    onListening: (a) => log.info(`waiting for the core to connect to socket://${a.host}:${a.port}`),
  });
  const setup: WorkerSetup = { store: o.store, host: o.host, port: o.port, source: o.live?.spec, answerCacheBytes: o.answerCacheBytes };
  cluster.setupPrimary({
    exec: fileURLToPath(new URL('./serve-worker.js', import.meta.url)),
    execArgv: workerExecArgv(),
    // bigint fields of the status cross as they are.
    serialization: 'advanced',
  });
  let stopping = false;
  const workers = new Set<Worker>();
  const fork = () => {
    const worker = cluster.fork({ LEDGER_QUERY_WORKER: JSON.stringify(setup) });
    workers.add(worker);
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'ingestStatus?' && ingestion) {
        worker.send({ type: 'ingestStatus', id: m.id, status: ingestion.status() } satisfies PrimaryMessage);
      }
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) return;
      // A worker that dies is replaced: the others serve meanwhile.
      log.error(`HTTP worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
      fork();
    });
    return worker;
  };
  // Listening once every worker is: with none left listening, node:cluster would close the port.
  const listening = new Promise<string>((resolve, reject) => {
    let waiting = o.workers;
    for (let i = 0; i < o.workers; i++) {
      const worker = fork();
      worker.once('listening', (address) => {
        if (--waiting === 0) resolve(`http://${o.host}:${address.port}`);
      });
      worker.once('exit', (code) => {
        // Stopped before every worker listened: close() ends the process.
        if (!stopping) reject(new Error(`HTTP worker exited (code ${code}) before listening`));
      });
    }
  });
  // Ingestion and the workers stop side by side: neither waits for the other.
  const close = async () => {
    stopping = true;
    await Promise.all([
      ingestion?.stop(),
      ...[...workers].map((w) => new Promise((resolve) => {
        w.once('exit', resolve);
        w.kill('SIGTERM');
      })),
    ]);
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  const address = await listening;
  log.info(`${o.workers} HTTP workers listening at ${address}`);
  return address;
}
