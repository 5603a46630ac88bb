/**
 * What the HTTP server takes from whoever connects, and for how long: the
 * limits that make it safe to expose, each with its default and the `serve`
 * flag that sets it (src/config/http-settings.ts; the README's configuration table). Constants
 * only: the settings (../config/) read their defaults here.
 */

export interface ReadLimits {
  /** Values of one list filter, repeated keys and comma-separated values counted alike. */
  maxListValues: number;
}

/** 1,000 party ids fit in a request (DEFAULT_HTTP_OPTIONS). */
export const DEFAULT_READ_LIMITS: ReadLimits = { maxListValues: 1000 };

/**
 * Answers kept per server (so per HTTP process): enough for the few hundred pages pollers
 * ask every block, with their compressed variants (BENCHMARKS.md, "Figures behind the code").
 */
export const DEFAULT_ANSWER_CACHE_BYTES = 24 << 20;

/**
 * The memory ceiling's V8 limits of an HTTP process, MB: its old generation
 * twice the caches' budgets (answers 24, statements 16, URLs 4), so that
 * garbage is collected long before it costs memory, and semi-spaces of 2
 * (BENCHMARKS.md, "Memory ceiling").
 */
export const HTTP_PROCESS_V8_LIMITS = { 'max-old-space-size': 96, 'max-semi-space-size': 2 } as const;

/** glibc's malloc arenas per HTTP process: its default, 8 per core, kept freed native memory resident (BENCHMARKS.md, "Memory ceiling"). */
export const HTTP_PROCESS_MALLOC_ARENAS = 2;

/**
 * Cross-origin requests: `*` lets every origin read answers, as the
 * original's gateway does by default; a list, those origins only; an empty
 * list, none.
 */
export type CorsOrigins = '*' | readonly string[];

export interface RateLimit {
  /** Requests per second a client is given, on average. */
  perSecond: number;
  /** Requests a client may make at once, beyond the average (its bucket's size). */
  burst: number;
}

export interface HttpOptions {
  /** A request's head (line and headers) must have arrived this long after its first byte, or the connection's start. */
  headTimeoutMs: number;
  /** A connection idle between requests is closed after this long. */
  idleTimeoutMs: number;
  /** Connections one HTTP process holds at most; beyond them new connections are closed as they come. */
  maxConnections: number;
  /** Bytes of a request's head (URL and headers together) at most. */
  maxHeadBytes: number;
  /** Values one list filter (filter.partyIds, say) may be given, repeated keys and commas counted alike. */
  maxListValues: number;
  /** A query of PostgreSQL is cancelled after this long (0: never); SQLite's cannot be (README "Limits"). */
  queryTimeoutMs: number;
  /** Requests per client, or undefined for no limit. */
  rateLimit: RateLimit | undefined;
  /** Peers whose X-Forwarded-For names the client (a reverse proxy in front), by address. */
  trustedProxies: readonly string[];
  /** Origins whose pages may read answers. */
  corsOrigins: CorsOrigins;
  /** Seconds a browser may keep a preflight's answer. */
  corsMaxAgeSeconds: number;
  /** GET /ready fails while the last block is older than this many seconds (0: it never fails for lag). */
  readyMaxLagSeconds: number;
  /** Streams (GET /api/v2/stream/orders) one client address may hold at once, as the original's 250. */
  streamsPerClient: number;
}

/**
 * The defaults. The head's 10 s and the idle 30 s are Node's own order of
 * magnitude but bounded tightly (Node checks every 30 s, so a head allowed
 * 60 s was cut after up to 90 s). A head of 128 KiB takes 1,000 party ids as
 * repeated keys (`filter.party_ids=<64 hex>&`, 82 bytes each); Go's server,
 * the original's, takes 1 MB. 1,000 values per list is that many ids. The
 * original's gateway allows every origin and lets a preflight be kept 7200 s.
 */
export const DEFAULT_HTTP_OPTIONS: HttpOptions = {
  headTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  maxConnections: 1000,
  maxHeadBytes: 128 << 10,
  maxListValues: DEFAULT_READ_LIMITS.maxListValues,
  queryTimeoutMs: 10_000,
  rateLimit: undefined,
  trustedProxies: ['127.0.0.1', '::1'],
  corsOrigins: '*',
  corsMaxAgeSeconds: 7200,
  readyMaxLagSeconds: 60,
  streamsPerClient: 250,
};

/** `given` over the defaults; a setting given as undefined keeps its default. */
export function httpOptions(given: Partial<HttpOptions> = {}): HttpOptions {
  const defined = Object.entries(given).filter(([, value]) => value !== undefined);
  return { ...DEFAULT_HTTP_OPTIONS, ...(Object.fromEntries(defined) as Partial<HttpOptions>) };
}
