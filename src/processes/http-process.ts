/**
 * An HTTP process of `serve --workers N` (./serve.ts): answers queries from a
 * read-only connection of its own; the primary ingests and tells it how
 * ingestion goes.
 */
import { UnavailableError } from '../api/errors.js';
import { httpOptions } from '../api/http-options.js';
import { listenError } from '../api/http-server.js';
import { httpProcessRegistry } from '../api/metrics/cluster.js';
import { buildApp } from '../api/app.js';
import { fastifyLogger } from '../logging.js';
import { asLedgerError, InternalError, toWire } from '../errors.js';
import type { IngestStatus } from '../domain/ingest-status.js';
import { HTTP_PROCESS_SETUP, type HttpProcessMessage, type HttpProcessSetup, type PrimaryMessage } from './protocol.js';
import { openStore } from '../store/open.js';
import type { StoreLog } from '../store/store.js';

const setup = JSON.parse(process.env[HTTP_PROCESS_SETUP] ?? 'null') as HttpProcessSetup | null;
if (setup === null) throw new InternalError('http-process runs as an HTTP process of ledger-query serve');

/** How long the primary has to say how ingestion goes before health checks call it unknown. */
const STATUS_WAIT_MS = 2000;
/** How long the primary has to gather every process's metrics (prom-client's own wait for the processes is 5 s). */
const METRICS_WAIT_MS = 6000;

/** Requests waiting for the primary's answer, by id. */
const asked = new Map<number, (answer: PrimaryMessage) => void>();
let nextId = 1;
process.on('message', (m: PrimaryMessage) => {
  if (m.type !== 'ingestStatus' && m.type !== 'metrics') return;
  asked.get(m.id)?.(m);
  asked.delete(m.id);
});

/** Asks the primary, which answers with the same id; one that does not answer within `waitMs` is said so. */
function askPrimary<T extends PrimaryMessage['type']>(type: `${T}?`, what: string, waitMs: number): Promise<Extract<PrimaryMessage, { type: T }>> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      asked.delete(id);
      reject(new UnavailableError(`the primary process did not say ${what} within ${waitMs / 1000} s`));
    }, waitMs);
    asked.set(id, (answer) => {
      clearTimeout(timer);
      resolve(answer as Extract<PrimaryMessage, { type: T }>);
    });
    const sent = process.send?.({ type, id } as HttpProcessMessage);
    if (!sent) {
      clearTimeout(timer);
      asked.delete(id);
      reject(new UnavailableError('the primary process is gone'));
    }
  });
}

/** Asked when requested, so that it is as fresh as the block the store shows. */
const ingestStatus = async (): Promise<IngestStatus> => (await askPrimary('ingestStatus?', 'how ingestion goes', STATUS_WAIT_MS)).status;

/** Every process's metrics, gathered by the primary. */
async function metrics(): Promise<string> {
  const answer = await askPrimary('metrics?', 'the metrics', METRICS_WAIT_MS);
  if (answer.text === undefined) throw new UnavailableError(`the metrics cannot be gathered: ${answer.error ?? 'no reason given'}`);
  return answer.text;
}

/** Tells the primary why this process cannot serve (it prints it, on one line), and exits once that is sent. */
function fail(e: unknown): Promise<never> {
  return new Promise(() => {
    const exit = () => process.exit(1);
    const message: HttpProcessMessage = { type: 'failed', error: toWire(asLedgerError(e)) };
    if (process.send === undefined) exit();
    process.send!(message, undefined, {}, exit);
    // Should the channel not take it, the exit still comes.
    setTimeout(exit, 2000);
  });
}

const http = httpOptions(setup.http);
// The store logs through the app's logger, which exists before the store has anything to say.
let log: StoreLog = () => undefined;
const store = await openStore(setup.store, { readOnly: true, queryTimeoutMs: http.queryTimeoutMs, log: (l, m) => log(l, m) }).catch(fail);
const app = await buildApp({
  store, logger: fastifyLogger(setup.log), logRequests: setup.log.requests,
  answerCacheBytes: setup.answerCacheBytes, http,
  ingestStatus: setup.source === undefined ? undefined : ingestStatus,
  metrics: { registry: httpProcessRegistry(), scrape: metrics, processMetrics: true },
});
log = (level, message) => app.log[level](message);
const close = async () => {
  await app.close();
  await store.close();
  process.exit(0);
};
process.once('SIGINT', close);
process.once('SIGTERM', close);
// The primary going away (killed, say) leaves nobody to serve for.
process.once('disconnect', close);
await app.listen({ host: setup.host, port: setup.port }).catch((e: unknown) => fail(listenError(e, setup.host, setup.port)));
