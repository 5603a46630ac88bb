/**
 * The ingest thread: runs ingestion off the HTTP thread, so that writing a
 * large block never stalls it. Talks to ./ingest-thread-handle.ts through messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Retention } from '../domain/retention.js';
import { asLedgerError, InternalError, toWire, type WireError } from '../errors.js';
import { openWriter } from '../store/open.js';
import type { StoreConfig, WriteStore } from '../store/store.js';
import { incompleteBlockMessage, ingest, type IngestStats } from './ingester.js';
import { LatestEvery } from './latest-every.js';
import { openSourceSpec } from './open-source.js';

export interface IngestThreadInput {
  store: StoreConfig;
  spec: string;
  follow: boolean;
  allowGaps: boolean;
  /** Of a gzip file cut short, store the whole blocks of its last member too, unverified. */
  acceptUnverified: boolean;
  /** What the writer keeps; it prunes the rest. */
  retention: Retention;
}

export type IngestThreadMessage =
  | { type: 'role'; role: 'standby' | 'writer' }
  | { type: 'progress'; stats: IngestStats; position: number }
  | { type: 'listening'; host: string; port: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string }
  /** No stats when stopped before it became the writer. */
  | { type: 'done'; stats: IngestStats | undefined }
  | { type: 'failed'; error: WireError; stats: IngestStats | undefined };

/** The failure to report; a bug's stack goes to the log, not to the status. */
function failure(e: unknown, post: (m: IngestThreadMessage) => void): WireError {
  const error = asLedgerError(e);
  if (error instanceof InternalError) post({ type: 'log', level: 'error', msg: (error.cause as Error | undefined)?.stack ?? error.stack ?? error.message });
  return toWire(error);
}

const PROGRESS_EVERY_MS = 100;

async function run(input: IngestThreadInput, post: (m: IngestThreadMessage) => void, signal: AbortSignal): Promise<void> {
  let store: WriteStore;
  try {
    // With PostgreSQL, instances started with a source elect one writer; the
    // others wait here as standbys (serving queries meanwhile) until it goes.
    store = await openWriter(input.store, {
      wait: true, signal, retention: input.retention,
      onStandby: () => post({ type: 'role', role: 'standby' }),
      onNotice: (msg) => post({ type: 'log', level: 'warn', msg }),
    });
  } catch (e) {
    if (signal.aborted) return post({ type: 'done', stats: undefined });
    return post({ type: 'failed', error: failure(e, post), stats: undefined });
  }
  post({ type: 'role', role: 'writer' });
  let latest: IngestStats | undefined;
  const progress = new LatestEvery<{ stats: IngestStats; position: number }>(PROGRESS_EVERY_MS, (p) => post({ type: 'progress', ...p }));
  try {
    const source = openSourceSpec(input.spec, {
      follow: input.follow, acceptUnverified: input.acceptUnverified, signal,
      log: (level, msg) => post({ type: 'log', level, msg }),
      onListening: (a) => post({ type: 'listening', ...a }),
    });
    const stats = await ingest(source, store, {
      allowGaps: input.allowGaps,
      onWarning: (msg) => post({ type: 'log', level: 'warn', msg }),
      onBlock: (_block, s, position) => {
        latest = s;
        // At most one message per interval, and always one after the last block of a burst.
        progress.offer({ stats: s, position });
      },
    }, signal);
    progress.stop();
    // A source read to its end leaves nothing older than the window behind, as `ingest` does not.
    if (!signal.aborted) await store.prune();
    const incomplete = incompleteBlockMessage(stats, source.unit);
    if (incomplete) post({ type: 'log', level: 'warn', msg: incomplete });
    post({ type: 'done', stats });
  } catch (e) {
    progress.stop();
    post({ type: 'failed', error: failure(e, post), stats: latest });
  } finally {
    await store.close();
  }
}

if (parentPort) {
  const port = parentPort;
  const controller = new AbortController();
  port.on('message', (m: { type: string }) => {
    if (m.type === 'stop') controller.abort();
  });
  await run(workerData as IngestThreadInput, (m) => port.postMessage(m), controller.signal);
  port.close();
}
