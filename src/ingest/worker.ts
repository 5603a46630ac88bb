/**
 * Runs ingestion in a worker thread so that writing a large block never
 * stalls the HTTP thread. Talks to ./background.ts through messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openWriter, type StoreConfig } from '../store/open.js';
import type { WriteStore } from '../store/store.js';
import { IngestError } from './errors.js';
import { incompleteBlockMessage, ingest, type IngestStats } from './ingester.js';
import { openSourceSpec } from './source-spec.js';

export interface WorkerInput {
  store: StoreConfig;
  spec: string;
  follow: boolean;
  allowGaps: boolean;
}

export type WorkerMessage =
  | { type: 'role'; role: 'standby' | 'writer' }
  | { type: 'progress'; stats: IngestStats; position: number }
  | { type: 'listening'; host: string; port: number }
  | { type: 'log'; level: 'info' | 'warn'; msg: string }
  /** No stats when stopped before it became the writer. */
  | { type: 'done'; stats: IngestStats | undefined }
  | { type: 'failed'; message: string; stats: IngestStats | undefined };

const PROGRESS_EVERY_MS = 100;

async function run(input: WorkerInput, post: (m: WorkerMessage) => void, signal: AbortSignal): Promise<void> {
  let store: WriteStore;
  try {
    // With PostgreSQL, instances started with a source elect one writer; the
    // others wait here as standbys (serving queries meanwhile) until it goes.
    store = await openWriter(input.store, {
      wait: true, signal,
      onStandby: () => post({ type: 'role', role: 'standby' }),
    });
  } catch (e) {
    if (signal.aborted) return post({ type: 'done', stats: undefined });
    return post({ type: 'failed', message: (e as Error).message, stats: undefined });
  }
  post({ type: 'role', role: 'writer' });
  let latest: { stats: IngestStats; position: number } | undefined;
  let lastPost = 0;
  let trailing: NodeJS.Timeout | undefined;
  const postLatest = () => {
    trailing = undefined;
    lastPost = Date.now();
    if (latest) post({ type: 'progress', ...latest });
  };
  try {
    const source = openSourceSpec(input.spec, {
      follow: input.follow, signal,
      log: (level, msg) => post({ type: 'log', level, msg }),
      onListening: (a) => post({ type: 'listening', ...a }),
    });
    const stats = await ingest(source, store, {
      allowGaps: input.allowGaps,
      onWarning: (msg) => post({ type: 'log', level: 'warn', msg }),
      onBlock: (_block, s, position) => {
        latest = { stats: s, position };
        // At most one message per interval, and always one after the last block of a burst.
        const wait = PROGRESS_EVERY_MS - (Date.now() - lastPost);
        if (wait <= 0) postLatest();
        else trailing ??= setTimeout(postLatest, wait);
      },
    }, signal);
    clearTimeout(trailing);
    const incomplete = incompleteBlockMessage(stats, source.unit);
    if (incomplete) post({ type: 'log', level: 'warn', msg: incomplete });
    post({ type: 'done', stats });
  } catch (e) {
    clearTimeout(trailing);
    const message = e instanceof IngestError ? e.message : (e as Error).stack ?? String(e);
    post({ type: 'failed', message, stats: latest?.stats });
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
  await run(workerData as WorkerInput, (m) => port.postMessage(m), controller.signal);
  port.close();
}
