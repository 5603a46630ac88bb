/**
 * The processes of `ledger-query serve`. With one HTTP process, this process
 * answers and (with a source) ingests on its ingest thread. With more, this
 * process is the primary: it migrates, ingests (still exactly one writer),
 * and forks HTTP processes (./http-process.ts, node:cluster's workers) that
 * share the port, each with a read-only connection of its own, so queries use
 * every core. Readers never see half a block: each block commits in one
 * transaction.
 */
import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HTTP_PROCESS_MALLOC_ARENAS, HTTP_PROCESS_V8_LIMITS, type HttpOptions } from '../api/http-options.js';
import { primaryScrape } from '../api/metrics/cluster.js';
import { fromWire, HttpProcessError, StoreNotFoundError, type LedgerError } from '../errors.js';
import type { IngestStatus } from '../domain/ingest-status.js';
import type { Retention } from '../domain/retention.js';
import { startIngestThread, type IngestThread, type IngestThreadOptions } from '../ingest/ingest-thread-handle.js';
import type { LogOptions } from '../log-options.js';
import { createLogger, fastifyLogger } from '../logging.js';
import { HTTP_PROCESS_SETUP, type HttpProcessMessage, type HttpProcessSetup, type PrimaryMessage } from './protocol.js';
import { refuseIncompleteEmbedded } from '../store/incomplete.js';
import { databasePath } from '../store/location.js';
import { openStore } from '../store/open.js';
import type { StoreConfig, StoreLog } from '../store/store.js';

export interface LiveSource {
  spec: string;
  follow: boolean;
  allowGaps: boolean;
  /** Of a gzip file cut short, store the whole blocks of its last member too, unverified. */
  acceptUnverified: boolean;
  /** What the writer keeps: it prunes the rest between groups. */
  retention: Retention;
}

export interface ServeOptions {
  store: StoreConfig;
  host: string;
  port: number;
  /** HTTP processes; 1 answers in this process. */
  httpProcesses: number;
  /** Ingest from this source while serving. */
  live?: LiveSource | undefined;
  /** Never migrate or write: a PostgreSQL role may have SELECT only, or the database be a replica. */
  readOnly: boolean;
  /** Bytes of answers each HTTP process keeps until the next block (0: none); the server's default if absent. */
  answerCacheBytes?: number | undefined;
  /** The HTTP server's limits, timeouts, CORS and rate limit (./api/http-options.ts); its defaults for what is not given. */
  http?: Partial<HttpOptions> | undefined;
  /** How the processes log. */
  log: LogOptions;
}

/**
 * Checks (and unless readOnly, creates or migrates) the store before anyone
 * serves it. An embedded store is created only for a source to fill: a
 * folder without one, served without --source, is a typo more often than
 * not, and would answer empty pages as if all were well.
 */
async function prepareStore(o: ServeOptions): Promise<void> {
  if (o.store.databaseUrl === undefined) refuseIncompleteEmbedded(o.store.dataDir);
  if (o.store.databaseUrl === undefined && !existsSync(databasePath(o.store.dataDir))) {
    if (o.readOnly) {
      throw new StoreNotFoundError(`no ledger-query store in ${o.store.dataDir}: ingest into it, or serve without --no-ingest, once to create it`);
    }
    if (o.live === undefined) {
      throw new StoreNotFoundError(
        `no ledger-query store in ${o.store.dataDir}: check the folder's name, or ingest into it, or serve it with a --source to create it`,
      );
    }
  }
  // A read-only instance checks the schema as it opens; the others create or migrate it.
  await (await openStore(o.store, { readOnly: o.readOnly })).close();
}

/** Serves until SIGINT or SIGTERM; resolves with the address once listening. */
export async function serve(o: ServeOptions): Promise<string> {
  await prepareStore(o);
  return o.httpProcesses <= 1 ? serveHere(o) : servePrimary(o);
}

/**
 * Ingestion on its thread, whose status says `failed` if the thread ends
 * without saying why (killed, out of memory): health checks must not take
 * a silent thread for one still at work.
 */
function ingestInBackground(options: IngestThreadOptions): { ingestion: IngestThread; status: () => IngestStatus } {
  const ingestion = startIngestThread(options);
  let vanished = false;
  void ingestion.finished.then((s) => {
    vanished = s.state === 'starting' || s.state === 'running';
  });
  const status = () => {
    const s = ingestion.status();
    return vanished ? { ...s, state: 'failed' as const, error: 'the ingest thread ended without saying why' } : s;
  };
  return { ingestion, status };
}

async function serveHere(o: ServeOptions): Promise<string> {
  // Loaded here: a primary of HTTP processes answers nothing itself, and starts them the sooner without it.
  const [{ buildApp }, { httpOptions }, { listenError }] = await Promise.all([
    import('../api/app.js'), import('../api/http-options.js'), import('../api/http-server.js'),
  ]);
  const [{ Registry }, { registerIngestMetrics }] = await Promise.all([import('prom-client'), import('../api/metrics/ingest-metrics.js')]);
  const http = httpOptions(o.http);
  // The store logs through the app's logger, which exists before the store has anything to say.
  let log: StoreLog = () => undefined;
  const store = await openStore(o.store, { readOnly: true, queryTimeoutMs: http.queryTimeoutMs, log: (l, m) => log(l, m) });
  let live: ReturnType<typeof ingestInBackground> | undefined;
  const registry = new Registry();
  if (o.live) registerIngestMetrics(registry, () => live!.status());
  const app = await buildApp({
    store, logger: fastifyLogger(o.log), logRequests: o.log.requests, answerCacheBytes: o.answerCacheBytes,
    ingestStatus: o.live && (() => live!.status()), http, metrics: { registry, processMetrics: true },
  });
  log = (level, message) => app.log[level](message);
  live = o.live && ingestInBackground({
    store: o.store, ...o.live,
    onLog: (level, msg) => app.log[level](msg),
    onListening: (a) => app.log.info(`waiting for the core to connect to socket://${a.host}:${a.port}`),
  });
  const ingestion = live?.ingestion;
  const close = async () => {
    await ingestion?.stop();
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  try {
    return await app.listen({ host: o.host, port: o.port });
  } catch (e) {
    await ingestion?.stop();
    await store.close();
    throw listenError(e, o.host, o.port);
  }
}

/**
 * Node's flags for the HTTP processes: this process's, then the memory
 * ceiling's V8 limits (HTTP_PROCESS_V8_LIMITS), each unless the user set
 * it: a young generation in semi-spaces of 2 MB rather than 16 (BENCHMARKS.md,
 * "Smaller HTTP workers") and an old generation sized to the caches' budgets.
 */
function httpProcessExecArgv(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  // V8 takes its flags with dashes or underscores.
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.replaceAll('_', '-'));
  const limits = Object.entries(HTTP_PROCESS_V8_LIMITS).filter(([flag]) => !given.some((g) => g.startsWith(`--${flag}`)));
  return [...execArgv, ...limits.map(([flag, mb]) => `--${flag}=${mb}`)];
}

/** The environment of an HTTP process beyond its setup: glibc's arenas few (HTTP_PROCESS_MALLOC_ARENAS) unless the user chose. */
function httpProcessEnv(): NodeJS.ProcessEnv {
  return process.env.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: String(HTTP_PROCESS_MALLOC_ARENAS) } : {};
}

async function servePrimary(o: ServeOptions): Promise<string> {
  const log = createLogger(o.log);
  const live = o.live && ingestInBackground({
    store: o.store, ...o.live,
    onLog: (level, msg) => log[level](msg),
    onListening: (a) => log.info(`waiting for the core to connect to socket://${a.host}:${a.port}`),
  });
  const ingestion = live?.ingestion;
  const scrape = primaryScrape(live?.status);
  const setup: HttpProcessSetup = {
    store: o.store, host: o.host, port: o.port, source: o.live?.spec, answerCacheBytes: o.answerCacheBytes, http: o.http ?? {},
    log: o.log,
  };
  cluster.setupPrimary({
    exec: fileURLToPath(new URL('./http-process.js', import.meta.url)),
    execArgv: httpProcessExecArgv(),
    // bigint fields of the status cross as they are.
    serialization: 'advanced',
  });
  let stopping = false;
  let started = false;
  /** Why an HTTP process could not start, as it said before it exited. */
  let startFailure: LedgerError | undefined;
  const processes = new Set<ClusterWorker>();
  const fork = () => {
    const child = cluster.fork({ ...httpProcessEnv(), [HTTP_PROCESS_SETUP]: JSON.stringify(setup) });
    processes.add(child);
    child.on('message', (m: HttpProcessMessage) => {
      if (m.type === 'ingestStatus?' && live) {
        child.send({ type: 'ingestStatus', id: m.id, status: live.status() } satisfies PrimaryMessage);
      } else if (m.type === 'metrics?') {
        const reply = (answer: Omit<Extract<PrimaryMessage, { type: 'metrics' }>, 'type' | 'id'>) => {
          if (child.isConnected()) child.send({ type: 'metrics', id: m.id, ...answer } satisfies PrimaryMessage);
        };
        scrape().then((text) => reply({ text }), (e: unknown) => reply({ error: e instanceof Error ? e.message : String(e) }));
      } else if (m.type === 'failed') {
        startFailure ??= fromWire(m.error);
      }
    });
    child.once('exit', (code, signal) => {
      processes.delete(child);
      // Before all listen, a process that exits is a setup that cannot work (a port in use): not retried.
      if (stopping || !started) return;
      // An HTTP process that dies is replaced: the others serve meanwhile.
      log.error(`HTTP process ${child.process.pid} exited (${signal ?? code}); starting another`);
      fork();
    });
    return child;
  };
  const stopAll = () => Promise.all([
    ingestion?.stop(),
    ...[...processes].map((w) => new Promise((resolve) => {
      w.once('exit', resolve);
      w.kill('SIGTERM');
    })),
  ]);
  // Listening once every HTTP process is: with none left listening, node:cluster would close the port.
  const listening = new Promise<string>((resolve, reject) => {
    let waiting = o.httpProcesses;
    for (let i = 0; i < o.httpProcesses; i++) {
      const child = fork();
      child.once('listening', (address) => {
        if (--waiting > 0) return;
        started = true;
        resolve(`http://${o.host}:${address.port}`);
      });
      child.once('exit', (code) => {
        if (stopping || started) return;
        // Stopped before every HTTP process listened: the others are stopped too, and the reason given.
        stopping = true;
        const failure = startFailure ?? new HttpProcessError(`an HTTP process exited (code ${code}) before listening`);
        void stopAll().then(() => reject(failure), () => reject(failure));
      });
    }
  });
  // Ingestion and the HTTP processes stop side by side: neither waits for the other.
  const close = async () => {
    stopping = true;
    await stopAll();
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  const address = await listening;
  log.info(`${o.httpProcesses} HTTP processes listening at ${address}`);
  return address;
}
