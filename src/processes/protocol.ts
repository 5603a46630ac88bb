/**
 * What the primary of `serve --workers N` (./serve.ts) and its HTTP processes
 * (./http-process.ts) say to each other. A module of its own, so that an HTTP
 * process loads none of the primary's.
 */
import type { HttpOptions } from '../api/http-options.js';
import type { WireError } from '../errors.js';
import type { IngestStatus } from '../domain/ingest-status.js';
import type { LogOptions } from '../log-options.js';
import type { StoreConfig } from '../store/store.js';

/** What the primary hands each HTTP process. */
export interface HttpProcessSetup {
  store: StoreConfig;
  host: string;
  port: number;
  /** The source the primary ingests from, if any: HTTP processes report how that goes. */
  source: string | undefined;
  answerCacheBytes: number | undefined;
  /** The server's limits and timeouts as given to serve; the defaults for the rest. */
  http: Partial<HttpOptions>;
  /** How to log: as the primary does. */
  log: LogOptions;
}

/**
 * An HTTP process asks the primary how ingestion goes, or for the metrics of
 * every process (the primary answers with the same id), or says why it
 * cannot serve before it exits.
 */
export type HttpProcessMessage =
  | { type: 'ingestStatus?'; id: number }
  /** GET /metrics: every process's metrics, gathered by the primary. */
  | { type: 'metrics?'; id: number }
  | { type: 'failed'; error: WireError };
export type PrimaryMessage =
  | { type: 'ingestStatus'; id: number; status: IngestStatus }
  | { type: 'metrics'; id: number; text?: string; error?: string };

/** The environment variable that hands an HTTP process its setup. */
export const HTTP_PROCESS_SETUP = 'LEDGER_QUERY_HTTP_PROCESS';
