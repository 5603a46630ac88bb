import { CorruptInputError, ListenError } from '../errors.js';
import { decodeBusEvent } from './codec.js';
import { formatHostPort, listenPair, type LogFn } from './nanomsg.js';
import type { EventSource, EventBatch, SourceEvent } from './source.js';

export interface SocketSourceOptions {
  host: string;
  /** 0 picks a free port (tests); onListening reports it. */
  port: number;
  /** A peer announcing a longer message is dropped. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Ends the stream: the listener and the peer are closed. */
  signal?: AbortSignal;
  log?: LogFn;
  onListening?: (address: { host: string; port: number }) => void;
  /** Reading from the peer pauses once this many payload bytes wait for the consumer. Default 4 MiB. */
  maxQueuedBytes?: number;
  /** ... or once this many messages wait. Default 4096. */
  maxQueuedMessages?: number;
  /** A peer must send its SP header within this time. Default 10 s. */
  handshakeTimeoutMs?: number;
}

/** What the source holds for its consumer, to check that back-pressure bounds it. */
export interface SocketSourceStats {
  /** Messages taken by the consumer since the source started (the last one's number). */
  delivered: number;
  queuedMessages: number;
  queuedBytes: number;
  peakQueuedMessages: number;
  peakQueuedBytes: number;
}

export interface SocketSource extends EventSource {
  readonly stats: Readonly<SocketSourceStats>;
}

const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_QUEUED_BYTES = 4 * 1024 * 1024;
const DEFAULT_MAX_QUEUED_MESSAGES = 4096;

/**
 * The core's live event stream: a nanomsg PAIR listener (see ./nanomsg.ts).
 * Offsets are message numbers counted from 1 since the source started, across
 * peers. A peer that connects after another one carries `restart: true` on its
 * first batch: the sender resends from its last committed block, so the block
 * the previous peer left open is dropped rather than completed with a mix.
 * Never ends by itself; `signal` (or leaving the for-await) closes it.
 */
export function socketSource(opts: SocketSourceOptions): SocketSource {
  const stats: SocketSourceStats = { delivered: 0, queuedMessages: 0, queuedBytes: 0, peakQueuedMessages: 0, peakQueuedBytes: 0 };
  let bound: { host: string; port: number } | undefined;
  return {
    // The real port once listening, so errors of an ephemeral-port source say where it was.
    get name() {
      const at = bound ?? opts;
      return `socket://${formatHostPort(at.host, at.port)}`;
    },
    unit: 'message',
    stats,
    events: () =>
      receive(opts, stats, (address) => {
        bound = address;
        opts.onListening?.(address);
      }),
  };
}

interface Segment {
  /** The first message of a peer that followed another one. */
  restart: boolean;
  messages: Buffer[];
}

/** Whole messages waiting for the consumer, cut where a new peer's stream begins. */
class MessageQueue {
  private segments: Segment[] = [{ restart: false, messages: [] }];

  constructor(private readonly stats: SocketSourceStats, private readonly maxBytes: number, private readonly maxMessages: number) {}

  /** Returns false once the queue is full: stop reading until the consumer takes. */
  push(message: Buffer): boolean {
    this.segments.at(-1)!.messages.push(message);
    const s = this.stats;
    s.queuedMessages++;
    s.queuedBytes += message.length;
    s.peakQueuedMessages = Math.max(s.peakQueuedMessages, s.queuedMessages);
    s.peakQueuedBytes = Math.max(s.peakQueuedBytes, s.queuedBytes);
    return s.queuedMessages < this.maxMessages && s.queuedBytes < this.maxBytes;
  }

  markRestart(): void {
    const last = this.segments.at(-1)!;
    if (last.messages.length === 0) last.restart = true;
    else this.segments.push({ restart: true, messages: [] });
  }

  /** Everything up to the next restart mark, or undefined when there is nothing to hand over. */
  take(): Segment | undefined {
    const first = this.segments[0]!;
    if (first.messages.length === 0) return undefined;
    if (this.segments.length > 1) this.segments.shift();
    else this.segments[0] = { restart: false, messages: [] };
    this.stats.queuedMessages -= first.messages.length;
    for (const m of first.messages) this.stats.queuedBytes -= m.length;
    return first;
  }
}

async function* receive(
  opts: SocketSourceOptions,
  stats: SocketSourceStats,
  onListening: (address: { host: string; port: number }) => void,
): AsyncGenerator<EventBatch> {
  const { signal } = opts;
  if (signal?.aborted) return;
  const log: LogFn = opts.log ?? ((level, msg) => process.stderr.write(`[${level}] socket source: ${msg}\n`));
  const queue = new MessageQueue(stats, opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES, opts.maxQueuedMessages ?? DEFAULT_MAX_QUEUED_MESSAGES);
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  let hadPeer = false;

  const listener = await listenPair({
    host: opts.host,
    port: opts.port,
    maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    handshakeTimeoutMs: opts.handshakeTimeoutMs,
    log,
    onPeer: () => {
      if (hadPeer) queue.markRestart();
      hadPeer = true;
      notify();
    },
    onMessage: (message) => {
      const room = queue.push(message);
      notify();
      return room;
    },
  }).catch((e: unknown) => {
    throw new ListenError(`cannot listen on ${formatHostPort(opts.host, opts.port)}: ${(e as Error).message}`, { cause: e });
  });
  signal?.addEventListener('abort', notify, { once: true });
  try {
    onListening(listener.address);
    log('info', `listening for a PAIR peer on ${formatHostPort(listener.address.host, listener.address.port)}`);
    for (;;) {
      if (signal?.aborted) return;
      const segment = queue.take();
      if (!segment) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      // The queue is empty again; the batch being handed over is the consumer's to hold.
      listener.resume();
      const { events, failure } = decodeAll(segment.messages, stats);
      // Events before an undecodable message may complete a block: hand them over first.
      if (events.length > 0 || segment.restart) yield segment.restart ? { restart: true, events } : { events };
      if (failure) throw failure;
    }
  } finally {
    signal?.removeEventListener('abort', notify);
    await listener.close();
  }
}

function decodeAll(messages: Buffer[], stats: SocketSourceStats): { events: SourceEvent[]; failure?: CorruptInputError } {
  const events: SourceEvent[] = [];
  for (const message of messages) {
    const number = ++stats.delivered;
    try {
      events.push({ event: decodeBusEvent(message), offset: number });
    } catch (e) {
      if (e instanceof CorruptInputError) return { events, failure: e.at(number) };
      throw e;
    }
  }
  return { events };
}
