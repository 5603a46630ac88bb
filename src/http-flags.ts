/**
 * The `serve` flags of the HTTP server's limits, timeouts, CORS and rate
 * limit (./api/http-options.ts holds their defaults): their parseArgs
 * options, their help, and their values read into HttpOptions.
 */
import type { ParseArgsConfig } from 'node:util';
import { DEFAULT_HTTP_OPTIONS as D, type CorsOrigins, type HttpOptions } from './api/http-options.js';
import { UsageError } from './errors.js';

export const HTTP_FLAGS = {
  'head-timeout': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-header-kb': { type: 'string' },
  'max-list-values': { type: 'string' },
  'query-timeout': { type: 'string' },
  'rate-limit': { type: 'string' },
  'rate-limit-burst': { type: 'string' },
  'trusted-proxies': { type: 'string' },
  'cors-origins': { type: 'string' },
  'cors-max-age': { type: 'string' },
  'ready-max-lag': { type: 'string' },
  'max-streams-per-client': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

type Values = { [K in keyof typeof HTTP_FLAGS]?: string | undefined };

const seconds = (ms: number) => ms / 1000;

export const HTTP_FLAGS_HELP = `  Limits, each per HTTP process (README "Limits"):
  --head-timeout S  a request's line and headers must arrive within S seconds
                  (default ${seconds(D.headTimeoutMs)}); else 408, and the connection is closed
  --idle-timeout S  close a connection idle between requests after S seconds
                  (default ${seconds(D.idleTimeoutMs)})
  --max-connections N  connections held at most; more are closed as they come
                  (default ${D.maxConnections})
  --max-header-kb N  KiB of a request's URL and headers at most (default
                  ${D.maxHeadBytes >> 10}: 1,000 party ids); else 431
  --max-list-values N  values one list filter (filter.partyIds, say) may be
                  given (default ${D.maxListValues}); else 400
  --query-timeout S  PostgreSQL cancels a query after S seconds, answered 504
                  (default ${seconds(D.queryTimeoutMs)}; 0: never); SQLite's cannot be cut short
  --rate-limit R  requests per second per client, on average (default: no
                  limit); past it 429
  --rate-limit-burst N  requests a client may make at once (default 5 x R)
  --trusted-proxies LIST  proxies whose X-Forwarded-For names the client
                  (default ${D.trustedProxies.join(',')}; none: no proxy)
  --cors-origins LIST  origins whose pages may read answers: * (default),
                  a comma-separated list of origins, or none
  --cors-max-age S  seconds a browser may keep a preflight's answer (default ${D.corsMaxAgeSeconds})
  --ready-max-lag S  GET /ready is 503 while the last block is older than S
                  seconds (default ${D.readyMaxLagSeconds}; 0: never)
  --max-streams-per-client N  order streams one client address may hold at
                  once (default ${D.streamsPerClient}, as the original); past it 429
`;

function number(name: string, value: string | undefined, what: string, ok: (n: number) => boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!ok(n)) throw new UsageError(`--${name} must be ${what}, got "${value}"`);
  return n;
}

const positiveSeconds = (name: string, value: string | undefined) => {
  const s = number(name, value, 'a number of seconds above 0', (n) => n > 0);
  return s === undefined ? undefined : Math.round(s * 1000);
};
const positiveInteger = (name: string, value: string | undefined) =>
  number(name, value, 'a positive integer', (n) => Number.isSafeInteger(n) && n > 0);

function listOf(value: string): string[] {
  return value === 'none' ? [] : value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function corsOf(value: string | undefined): CorsOrigins | undefined {
  if (value === undefined) return undefined;
  if (value === '*') return '*';
  const origins = listOf(value);
  const bad = origins.find((o) => !/^(https?:\/\/)?[^/\s]+$/.test(o));
  if (bad !== undefined) throw new UsageError(`--cors-origins: "${bad}" is not an origin (scheme://host[:port]), *, or none`);
  return origins;
}

/** The HTTP options the flags give; undefined for each flag not given (the default applies). */
export function httpOptionsOf(values: Values): Partial<HttpOptions> {
  const perSecond = number('rate-limit', values['rate-limit'], 'a number of requests per second above 0', (n) => n > 0);
  const burst = positiveInteger('rate-limit-burst', values['rate-limit-burst']);
  if (burst !== undefined && perSecond === undefined) throw new UsageError('--rate-limit-burst goes with --rate-limit');
  const queryTimeout = number('query-timeout', values['query-timeout'], 'a number of seconds (0: never)', (n) => n >= 0);
  const maxHeaderKb = positiveInteger('max-header-kb', values['max-header-kb']);
  return {
    headTimeoutMs: positiveSeconds('head-timeout', values['head-timeout']),
    idleTimeoutMs: positiveSeconds('idle-timeout', values['idle-timeout']),
    maxConnections: positiveInteger('max-connections', values['max-connections']),
    maxHeadBytes: maxHeaderKb === undefined ? undefined : maxHeaderKb * 1024,
    maxListValues: positiveInteger('max-list-values', values['max-list-values']),
    queryTimeoutMs: queryTimeout === undefined ? undefined : Math.round(queryTimeout * 1000),
    rateLimit: perSecond === undefined ? undefined : { perSecond, burst: burst ?? Math.max(1, Math.ceil(5 * perSecond)) },
    trustedProxies: values['trusted-proxies'] === undefined ? undefined : listOf(values['trusted-proxies']),
    corsOrigins: corsOf(values['cors-origins']),
    corsMaxAgeSeconds: number('cors-max-age', values['cors-max-age'], 'a whole number of seconds', Number.isSafeInteger),
    readyMaxLagSeconds: number('ready-max-lag', values['ready-max-lag'], 'a number of seconds (0: never)', (n) => n >= 0),
    streamsPerClient: positiveInteger('max-streams-per-client', values['max-streams-per-client']),
  };
}
