import type { BusEvent } from './events.js';

export type OffsetUnit = 'byte' | 'uncompressed byte' | 'message';

/** One decoded event and where it starts in its source. */
export interface SourceEvent {
  event: BusEvent;
  offset: number;
}

/**
 * Events in batches (one per read chunk), so the per-event cost stays a loop
 * iteration rather than an async step.
 */
export interface EventBatch {
  /**
   * The stream broke off and starts again with this batch (a socket peer
   * reconnected): whatever block was open is incomplete and must be dropped;
   * the sender resends it.
   */
  restart?: boolean;
  events: SourceEvent[];
  /**
   * The source ended here with `bytes` bytes that do not form a whole event
   * (the writer was cut off), starting at `offset`. Only on a last batch.
   */
  cutOff?: { offset: number; bytes: number };
}

/** A stream of events. Pull-based: a slow consumer slows the source (back-pressure). */
export interface EventSource {
  /** Printable name, e.g. "file:///data/a.events". */
  readonly name: string;
  /** What offsets count: bytes of the source, bytes after decompressing it, or messages. */
  readonly unit: OffsetUnit;
  events(): AsyncIterable<EventBatch>;
}
