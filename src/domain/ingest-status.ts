/**
 * What an instance reports of its ingestion: written by the ingest thread's
 * handle (../ingest/ingest-thread-handle.ts), read by the API (status,
 * health, metrics) and passed between the serve processes. Types only, so
 * that the API need not import the ingest layer.
 */
/**
 * What an instance does about ingestion: `writer` holds the store's writer
 * lock and ingests; `standby` has a source but waits for the instance that
 * holds the lock to go (PostgreSQL only); `reader` has no source.
 */
export type IngestRole = 'writer' | 'standby' | 'reader';

/** What GET /api/v2/ingest/status reports for an instance with a source. */
export interface IngestStatus {
  /** Standby until the ingest thread has the writer lock: until then it must not be mistaken for the writer. */
  role: Exclude<IngestRole, 'reader'>;
  source: string;
  state: 'starting' | 'running' | 'finished' | 'stopped' | 'failed';
  error?: string;
  /** For socket sources: the address the core should dial. */
  listening?: { host: string; port: number };
  /** The last committed block and how far behind now it is: filled in from the store, the one source of truth. */
  lastBlock?: { height: bigint; time: bigint };
  lagSeconds?: number;
  /** The newest block height read from the source, stored or not yet (the lag in blocks: this less lastBlock's). */
  heightRead?: bigint;
  events: number;
  blocksCommitted: number;
  blocksAlreadyStored: number;
  /** Of those, blocks whose hash differed from the stored block of their height. */
  blocksWithOtherHash: number;
  /** The source ended inside this block, which is not stored. */
  incompleteBlock?: { height?: bigint; offset: number };
  eventsPerSecond: number;
  skipped: { outsideBlock: number; byType: Record<string, number> };
  /** When the writer last read an event, or began to read its source (Unix ms): how long a running source has been still. */
  readAt?: number;
}

/** The status of ingestion from `spec` before it has reported anything. */
export function startingStatus(spec: string): IngestStatus {
  return {
    role: 'standby', source: spec, state: 'starting', events: 0, blocksCommitted: 0, blocksAlreadyStored: 0, blocksWithOtherHash: 0,
    eventsPerSecond: 0, skipped: { outsideBlock: 0, byType: {} },
  };
}
