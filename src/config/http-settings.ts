/**
 * The settings of `serve`'s HTTP server: limits, timeouts, CORS and rate
 * limit (../api/http-options.ts holds their defaults and what each means to
 * the server), and their values read into HttpOptions.
 */
import { DEFAULT_HTTP_OPTIONS as D, type CorsOrigins, type HttpOptions } from '../api/http-options.js';
import { UsageError } from '../errors.js';
import {
  decimal, defaulted, listOf, optional, positiveInteger, positiveSeconds, secondsOrZero, showList, type ValueOf,
} from './setting.js';

const serve = ['serve'] as const;
const seconds = (ms: number) => ms / 1000;

function corsOf(text: string): CorsOrigins {
  if (text === '*') return '*';
  const origins = listOf(text);
  const bad = origins.find((o) => !/^(https?:\/\/)?[^/\s]+$/.test(o));
  if (bad !== undefined) throw new UsageError(`"${bad}" is not an origin (scheme://host[:port]), *, or none`);
  return origins;
}

export const HTTP_SETTINGS = {
  'head-timeout': defaulted({
    placeholder: 'S', commands: serve, fileKind: 'number', parse: positiveSeconds,
    help: 'a request\'s line and headers must arrive within S seconds; else 408, and the connection is closed',
  }, seconds(D.headTimeoutMs)),
  'idle-timeout': defaulted({
    placeholder: 'S', commands: serve, fileKind: 'number', parse: positiveSeconds,
    help: 'close a connection idle between requests after S seconds',
  }, seconds(D.idleTimeoutMs)),
  'max-connections': defaulted({
    placeholder: 'N', commands: serve, fileKind: 'number', parse: positiveInteger,
    help: 'connections each HTTP process holds at most; more are closed as they come',
  }, D.maxConnections),
  'max-header-kb': defaulted({
    placeholder: 'N', commands: serve, fileKind: 'number', parse: positiveInteger,
    help: 'KiB of a request\'s URL and headers at most (1,000 party ids fit in the default); else 431',
  }, D.maxHeadBytes >> 10),
  'max-list-values': defaulted({
    placeholder: 'N', commands: serve, fileKind: 'number', parse: positiveInteger,
    help: 'values one list filter (filter.partyIds, say) may be given; else 400',
  }, D.maxListValues),
  'query-timeout': defaulted({
    placeholder: 'S', commands: serve, fileKind: 'number', parse: secondsOrZero,
    help: 'PostgreSQL cancels a query after S seconds, answered 504 (0: never); SQLite\'s cannot be cut short',
  }, seconds(D.queryTimeoutMs)),
  'rate-limit': optional({
    placeholder: 'R', commands: serve, fileKind: 'number',
    parse: decimal('a number of requests per second above 0', (n) => n > 0),
    help: 'requests per second per client, on average, past which 429 (default: no limit)',
  }),
  'rate-limit-burst': optional({
    placeholder: 'N', commands: serve, fileKind: 'number', parse: positiveInteger,
    help: 'requests a client may make at once, with --rate-limit (default 5 x R)',
  }),
  'trusted-proxies': defaulted({
    placeholder: 'LIST', commands: serve, fileKind: 'list', parse: listOf, show: showList,
    help: 'proxies whose X-Forwarded-For names the client (none: no proxy)',
  }, D.trustedProxies as string[]),
  'cors-origins': defaulted({
    placeholder: 'LIST', commands: serve, fileKind: 'list', parse: corsOf,
    show: (v: CorsOrigins) => (v === '*' ? '*' : showList(v)),
    help: 'origins whose pages may read answers: *, a comma-separated list of origins, or none',
  }, D.corsOrigins),
  'cors-max-age': defaulted({
    placeholder: 'S', commands: serve, fileKind: 'number', parse: decimal('a whole number of seconds', Number.isSafeInteger),
    help: 'seconds a browser may keep a preflight\'s answer',
  }, D.corsMaxAgeSeconds),
  'ready-max-lag': defaulted({
    placeholder: 'S', commands: serve, fileKind: 'number', parse: secondsOrZero,
    help: 'GET /ready is 503 while the last block is older than S seconds, /health while a running source reads nothing for S seconds (0: never)',
  }, D.readyMaxLagSeconds),
  'max-streams-per-client': defaulted({
    placeholder: 'N', commands: serve, fileKind: 'number', parse: positiveInteger,
    help: 'order streams one client address may hold at once (as the original); past it 429',
  }, D.streamsPerClient),
};

type Values = { [K in keyof typeof HTTP_SETTINGS]: ValueOf<(typeof HTTP_SETTINGS)[K]> };

/** The HTTP server's options of a configuration's values; --rate-limit-burst needs --rate-limit. */
export function httpOptionsOf(v: Values): HttpOptions {
  const perSecond = v['rate-limit'];
  const burst = v['rate-limit-burst'];
  if (burst !== undefined && perSecond === undefined) throw new UsageError('--rate-limit-burst goes with --rate-limit');
  return {
    headTimeoutMs: Math.round(v['head-timeout'] * 1000),
    idleTimeoutMs: Math.round(v['idle-timeout'] * 1000),
    maxConnections: v['max-connections'],
    maxHeadBytes: v['max-header-kb'] * 1024,
    maxListValues: v['max-list-values'],
    queryTimeoutMs: Math.round(v['query-timeout'] * 1000),
    rateLimit: perSecond === undefined ? undefined : { perSecond, burst: burst ?? Math.max(1, Math.ceil(5 * perSecond)) },
    trustedProxies: v['trusted-proxies'],
    corsOrigins: v['cors-origins'],
    corsMaxAgeSeconds: v['cors-max-age'],
    readyMaxLagSeconds: v['ready-max-lag'],
    streamsPerClient: v['max-streams-per-client'],
  };
}
