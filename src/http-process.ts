/**
 * An HTTP process of `serve --workers N` (./serve.ts): answers queries from a
 * read-only connection of its own; the primary ingests and tells it how
 * ingestion goes.
 */
import { buildServer } from './api/server.js';
import { InternalError } from './errors.js';
import { startingStatus, type IngestStatus } from './ingest/background.js';
import { HTTP_PROCESS_SETUP, type HttpProcessMessage, type HttpProcessSetup, type PrimaryMessage } from './serve-protocol.js';
import { openStore } from './store/open.js';

const setup = JSON.parse(process.env[HTTP_PROCESS_SETUP] ?? 'null') as HttpProcessSetup | null;
if (setup === null) throw new InternalError('http-process runs as an HTTP process of ledger-query serve');

/** Status requests waiting for the primary's answer, by id. */
const asked = new Map<number, (status: IngestStatus) => void>();
let nextId = 1;
process.on('message', (m: PrimaryMessage) => {
  if (m.type !== 'ingestStatus') return;
  asked.get(m.id)?.(m.status);
  asked.delete(m.id);
});

/** Asked when requested, so that it is as fresh as the block the store shows. */
function ingestStatus(source: string): Promise<IngestStatus> {
  const id = nextId++;
  return new Promise((resolve) => {
    asked.set(id, resolve);
    const sent = process.send?.({ type: 'ingestStatus?', id } satisfies HttpProcessMessage);
    if (!sent) {
      asked.delete(id);
      resolve(startingStatus(source));
    }
  });
}

const store = await openStore(setup.store, { readOnly: true });
const app = await buildServer({
  store, logger: { level: process.env.LOG_LEVEL ?? 'info' }, logRequests: process.env.LOG_REQUESTS === '1',
  answerCacheBytes: setup.answerCacheBytes,
  ingestStatus: setup.source === undefined ? undefined : () => ingestStatus(setup.source!),
});
const close = async () => {
  await app.close();
  await store.close();
  process.exit(0);
};
process.once('SIGINT', close);
process.once('SIGTERM', close);
// The primary going away (killed, say) leaves nobody to serve for.
process.once('disconnect', close);
await app.listen({ host: setup.host, port: setup.port });
