import type { OffsetUnit } from './source.js';

/** Where in a source an event came from, for error messages an operator can act on. */
export interface SourcePosition {
  /** e.g. "file:///data/events.bin", "socket://0.0.0.0:3005", "ndjson:-" */
  source: string;
  /** Byte offset of the record (files, NDJSON) or message number (socket). */
  offset: number;
  /** What `offset` counts, for the message. */
  unit?: OffsetUnit;
}

/**
 * Ingestion stopped. Everything before `committedHeight` is stored; nothing of
 * the block that was open when it failed.
 */
export class IngestError extends Error {
  constructor(
    readonly reason: string,
    readonly position: SourcePosition,
    /** The block being assembled when it failed, if one was open. */
    readonly blockHeight: bigint | undefined,
  ) {
    const at = position.unit === 'message' ? `message ${position.offset}` : `${position.unit ?? 'byte'} offset ${position.offset}`;
    const block = blockHeight === undefined ? 'outside any block' : `in block ${blockHeight}`;
    super(`${position.source}: ${at}, ${block}: ${reason}`);
    this.name = 'IngestError';
  }
}
