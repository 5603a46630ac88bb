/**
 * What a store's writer (./writer.ts, on the ingesting thread) and its
 * writer thread (./sqlite/writer-thread.ts, ./postgres/writer-thread.ts) say
 * to each other, and the thread's side of it, the same for both backends:
 * requests are served one at a time in the order sent, errors travel by
 * their catalogue code, and the rule after a failed write is kept here.
 * A module free of side effects, so that the writer may import it.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { EarlierWriteFailedError, fromWire, toWire, type WireError } from '../errors.js';
import { PruneTurns, threadCpuMs, type BatchClock, type PruneStep } from './prune-turns.js';
import type { CommittedBlock, StoredBlock } from './store.js';

export type WriterRequest<G> =
  | { type: 'abort' }
  | { id: number; type: 'lastBlock' }
  | { id: number; type: 'storedBlocks'; from: bigint; to: bigint }
  /**
   * `after`: the write sent before this one, if its outcome was still unknown
   * to the caller when it made this call. `error`: the group could not be
   * packed; it still takes its turn, and fails.
   */
  | { id: number; type: 'write'; group: G; after: number | undefined; error?: WireError }
  /** Prune until nothing older than the window is answered any more. */
  | { id: number; type: 'prune' }
  | { id: number; type: 'close' };

/** The requests that expect a reply. */
export type WriterCall<G> = Exclude<WriterRequest<G>, { type: 'abort' }>;

export type WriterReply =
  | { type: 'standby' }
  | { type: 'opened' }
  | { type: 'openFailed'; error: WireError }
  /** Something an operator should know that stops nothing (a store pruned with a shorter window, a migration's progress). */
  | { type: 'notice'; message: string }
  /** A prune batch done: its rows, its milliseconds, commit included, and the thread's CPU milliseconds (WriterOptions.onPruned). */
  | { type: 'pruned'; rows: number; ms: number; cpuMs: number }
  | { type: 'reply'; id: number; value?: unknown; error?: WireError };

/** A backend's write session, as its writer thread holds it. */
export interface WriteSession<G> {
  lastBlock(): CommittedBlock | undefined | Promise<CommittedBlock | undefined>;
  storedBlocks(from: bigint, to: bigint): Map<bigint, StoredBlock> | Promise<Map<bigint, StoredBlock>>;
  write(group: G): void | Promise<void>;
  /** One batch of pruning (./prune-turns.ts); absent when the store keeps everything. */
  prune?: PruneStep;
  /** What a batch's time is measured by: 'threadCpu' where its work runs on the writer thread. */
  pruneClock?: BatchClock;
  close(): void | Promise<void>;
}

export interface OpenContext {
  /** Aborted when the writer gives up opening (a standby told to stop). */
  signal: AbortSignal;
  onStandby: () => void;
  /** Says something to the writer's caller (WriterOptions.onNotice). */
  notice: (message: string) => void;
}

/**
 * The rule after a failed write, on both backends: a write made while an
 * earlier one was outstanding fails without writing if that one failed (its
 * blocks would follow blocks that are not stored); a write made once the
 * failure was reported is written as usual.
 */
class WriteOutcomes {
  private last: { id: number; failure: string | undefined } | undefined;

  /** Runs a write; `after` names the write it must follow. */
  async run(id: number, after: number | undefined, write: () => void | Promise<void>): Promise<void> {
    const earlier = after !== undefined && this.last?.id === after ? this.last.failure : undefined;
    try {
      if (earlier !== undefined) throw new EarlierWriteFailedError(`not written: an earlier group failed: ${earlier}`);
      await write();
      this.last = { id, failure: undefined };
    } catch (e) {
      // A refusal passes on the first failure's reason, not a chain of refusals.
      this.last = { id, failure: earlier ?? (e instanceof Error ? e.message : String(e)) };
      throw e;
    }
  }
}

const asMessage = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Serves a writer thread: opens the session (answering `opened`, `standby`
 * or `openFailed`), then each request in turn, until `close`. `asError`
 * turns what the backend's driver throws into errors of the catalogue.
 */
export function runWriterThread<G>(
  open: (context: OpenContext) => Promise<WriteSession<G>>,
  asError: (e: unknown) => unknown = (e) => e,
  port: MessagePort | null = parentPort,
): void {
  if (port === null) return;
  const post = (m: WriterReply) => port.postMessage(m);
  const abort = new AbortController();
  const requests: WriterCall<G>[] = [];
  let session: WriteSession<G> | undefined;
  let pruning: PruneTurns | undefined;
  let busy = false;
  let wake: NodeJS.Timeout | undefined;
  const outcomes = new WriteOutcomes();
  const notice = (message: string) => post({ type: 'notice', message });

  const handle = (request: WriterCall<G>, s: WriteSession<G>): Promise<unknown> => {
    switch (request.type) {
      case 'lastBlock': return Promise.resolve(s.lastBlock());
      case 'storedBlocks': return Promise.resolve(s.storedBlocks(request.from, request.to));
      case 'write':
        return outcomes.run(request.id, request.after, () => {
          if (request.error) throw fromWire(request.error);
          return s.write(request.group);
        });
      case 'prune': return pruning === undefined ? Promise.resolve() : pruning.all();
      case 'close': return Promise.resolve(s.close());
    }
  };

  /**
   * One at a time, in the order sent: a write is several statements, and a
   * read slipped in would run inside its transaction. Prune batches run
   * between requests (./prune-turns.ts): after a write, as long as it took,
   * while requests wait; when none waits, one at a time, the thread's event
   * loop turning between them so that a request arriving meanwhile is
   * served after the batch under way.
   */
  const drain = async () => {
    if (busy || session === undefined) return;
    busy = true;
    clearTimeout(wake);
    try {
      for (;;) {
        while (pruning?.wanted(requests.length > 0) === true) {
          await pruning.batch();
          if (requests.length === 0) break;
        }
        const request = requests.shift();
        if (request === undefined) break;
        const started = performance.now();
        const startedCpu = threadCpuMs();
        try {
          post({ type: 'reply', id: request.id, value: await handle(request, session) });
        } catch (e) {
          post({ type: 'reply', id: request.id, error: toWire(asError(e)) });
        }
        if (request.type === 'close') {
          pruning = undefined;
          return port.close();
        }
        if (request.type === 'write') pruning?.wrote(performance.now() - started, threadCpuMs() - startedCpu);
      }
    } finally {
      busy = false;
    }
    const next = pruning?.nextInMs();
    if (next !== undefined) wake = setTimeout(() => void drain(), next);
  };

  port.on('message', (request: WriterRequest<G>) => {
    if (request.type === 'abort') return abort.abort();
    requests.push(request);
    void drain();
  });
  open({ signal: abort.signal, onStandby: () => post({ type: 'standby' }), notice }).then(
    (opened) => {
      session = opened;
      const step = opened.prune;
      if (step !== undefined) {
        pruning = new PruneTurns(
          step,
          (e) => notice(`pruning failed, and waits for the next block: ${asMessage(asError(e))}`),
          (rows, ms, cpuMs) => post({ type: 'pruned', rows, ms, cpuMs }),
          undefined,
          undefined,
          opened.pruneClock,
        );
      }
      post({ type: 'opened' });
      void drain();
    },
    (e: unknown) => {
      post({ type: 'openFailed', error: toWire(asError(e)) });
      port.close();
    },
  );
}
