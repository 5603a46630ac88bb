import { Worker } from 'node:worker_threads';
import type { IngestStats } from './ingester.js';
import { parseSourceSpec, type SourceSpec } from './source-spec.js';
import type { IngestThreadInput, IngestThreadMessage } from './ingest-thread.js';
import { startingStatus, type IngestStatus } from '../domain/ingest-status.js';

export interface IngestThread {
  status(): IngestStatus;
  /** Resolves once ingestion ends (the source ended, failed, or stop() was called). */
  readonly finished: Promise<IngestStatus>;
  stop(): Promise<IngestStatus>;
}

export interface IngestThreadOptions extends IngestThreadInput {
  onLog?: (level: 'info' | 'warn' | 'error', msg: string) => void;
  onListening?: (address: { host: string; port: number }) => void;
}

const RATE_WINDOW_MS = 5000;

const isStdin = (s: SourceSpec) => s.kind === 'ndjson' && s.path === '-';
const STOP_GRACE_MS = 10_000;

/** Starts ingestion from `spec` on the ingest thread; the store is written there, read here. */
export function startIngestThread(opts: IngestThreadOptions): IngestThread {
  const { onLog, onListening, ...input } = opts;
  const thread = new Worker(new URL('./ingest-thread.js', import.meta.url), {
    workerData: input satisfies IngestThreadInput,
    stdin: isStdin(parseSourceSpec(input.spec)),
  });
  if (thread.stdin) process.stdin.pipe(thread.stdin);

  const status = startingStatus(input.spec);
  const samples: { at: number; events: number }[] = [];
  const apply = (s: IngestStats) => {
    if (s.events !== status.events) status.readAt = Date.now();
    status.source = s.source;
    status.events = s.events;
    status.blocksCommitted = s.blocksCommitted;
    status.blocksAlreadyStored = s.blocksAlreadyStored;
    status.blocksWithOtherHash = s.blocksWithOtherHash;
    if (s.incompleteBlock) status.incompleteBlock = s.incompleteBlock;
    if (s.lastBlock) status.lastBlock = { height: s.lastBlock.height, time: s.lastBlock.time };
    if (s.heightRead !== undefined) status.heightRead = s.heightRead;
    status.skipped = { outsideBlock: s.eventsOutsideBlock, byType: s.skippedByType };
    const now = Date.now();
    samples.push({ at: now, events: s.events });
    while (samples.length > 2 && now - samples[0]!.at > RATE_WINDOW_MS) samples.shift();
    const first = samples[0]!;
    status.eventsPerSecond = now > first.at ? Math.round(((s.events - first.events) * 1000) / (now - first.at)) : 0;
  };

  let stopping = false;
  const finished = new Promise<IngestStatus>((resolve) => {
    thread.on('message', (m: IngestThreadMessage) => {
      switch (m.type) {
        case 'role':
          status.role = m.role;
          // The writer reads its source from here on, though blocks it skips as stored report no progress.
          if (m.role === 'writer' && status.state === 'starting') status.state = 'running';
          if (m.role === 'writer') status.readAt = Date.now();
          onLog?.('info', m.role === 'writer'
            ? `writer: ingesting ${input.spec}`
            : 'standby: another instance holds the writer lock; this one takes over when it goes');
          break;
        case 'progress':
          // The thread's last word stands: a report sent before it but read after changes nothing.
          if (status.state !== 'starting' && status.state !== 'running') break;
          status.state = 'running';
          apply(m.stats);
          break;
        case 'listening':
          status.state = 'running';
          status.listening = { host: m.host, port: m.port };
          onListening?.(status.listening);
          break;
        case 'log':
          onLog?.(m.level, m.msg);
          break;
        case 'done':
          if (m.stats) apply(m.stats);
          status.state = stopping ? 'stopped' : 'finished';
          status.eventsPerSecond = 0;
          break;
        case 'failed':
          if (m.stats) apply(m.stats);
          status.state = 'failed';
          status.error = m.error.message;
          status.eventsPerSecond = 0;
          onLog?.('error', `ingestion stopped: ${m.error.message}`);
          break;
      }
    });
    thread.on('error', (e) => {
      status.state = 'failed';
      status.error = e.message;
      onLog?.('error', `the ingest thread crashed: ${e.stack ?? e.message}`);
    });
    thread.on('exit', () => resolve(status));
  });

  return {
    status: () => status,
    finished,
    async stop() {
      stopping = true;
      thread.postMessage({ type: 'stop' });
      if (thread.stdin) {
        process.stdin.unpipe(thread.stdin);
        thread.stdin.end();
      }
      // A group in flight is one transaction: ending the thread rolls it back, never half-commits it.
      const deadline = setTimeout(() => void thread.terminate(), STOP_GRACE_MS).unref();
      const s = await finished;
      clearTimeout(deadline);
      return s;
    },
  };
}
