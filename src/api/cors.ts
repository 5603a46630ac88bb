/**
 * Cross-origin requests, as the original's gateway answers them by default
 * (rs/cors with every origin allowed, GET and HEAD among the methods, any
 * request header, preflights kept 7200 s, no credentials), so that a
 * browser app can read answers from another origin. Written by hand rather
 * than with @fastify/cors: page answers leave before Fastify sees them
 * (./fast-path.ts), and both paths must send the same headers, so they are
 * set in one place before either (./front-door.ts); the rules are the few
 * lines below.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { BLOCK_HEIGHT_HEADER, BLOCK_TIMESTAMP_HEADER } from './block-headers.js';
import type { CorsOrigins } from './http-options.js';
import { IGNORED_PARAMETERS_HEADER } from './query.js';
import { RATE_LIMIT_HEADERS } from './rate-limit.js';

/** The methods a cross-origin page may use: the API only reads. */
const METHODS = 'GET, HEAD';

/** What a page may read of an answer beyond the basic headers: the block it names, its tag, the rate limit's state, the parameters it ignored. */
const EXPOSED = [BLOCK_HEIGHT_HEADER, BLOCK_TIMESTAMP_HEADER, 'ETag', ...RATE_LIMIT_HEADERS, IGNORED_PARAMETERS_HEADER].join(', ');

export interface CorsPolicy {
  origins: CorsOrigins;
  maxAgeSeconds: number;
}

type HeaderValue = number | string | readonly string[] | undefined;

const varyNames = (value: HeaderValue): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [String(value)])
  .flatMap((v: string) => v.split(','))
  .map((v) => v.trim())
  .filter((v) => v !== '');

/** One `Vary` naming what `first` names, then what `second` adds (case aside): both paths write it so. */
export function mergeVary(first: HeaderValue, second: HeaderValue): string {
  const names = varyNames(first);
  for (const name of varyNames(second)) {
    if (!names.some((n) => n.toLowerCase() === name.toLowerCase())) names.push(name);
  }
  return names.join(', ');
}

function allowedOrigin(policy: CorsPolicy, origin: string | undefined): string | undefined {
  if (policy.origins === '*') return '*';
  if (origin === undefined) return undefined;
  // As the original compares them: with or without the scheme.
  const bare = (o: string) => o.replace(/^https?:\/\//, '');
  return policy.origins.some((o) => o === origin || bare(o) === bare(origin)) ? origin : undefined;
}

/**
 * The CORS headers of every answer to a request from `requestOrigin`. With every origin allowed they
 * do not depend on the request (`*`), so an answer kept by a shared cache
 * serves any origin; with a list, the origin is echoed when allowed, and
 * `Vary: Origin` said either way.
 */
export function corsHeaders(policy: CorsPolicy, requestOrigin: string | undefined): OutgoingHttpHeaders {
  if (policy.origins !== '*' && policy.origins.length === 0) return {};
  const origin = allowedOrigin(policy, requestOrigin);
  const headers: OutgoingHttpHeaders = policy.origins === '*' ? {} : { Vary: 'Origin' };
  if (origin === undefined) return headers;
  headers['Access-Control-Allow-Origin'] = origin;
  headers['Access-Control-Expose-Headers'] = EXPOSED;
  return headers;
}

/**
 * The CORS headers of a refusal of a request that could not be read (Node's
 * parser gave up on it, its Origin unknown): every origin's, when every
 * origin is allowed, so that a page whose URL was too long reads why.
 */
export function corsHeadersUnread(origins: CorsOrigins): OutgoingHttpHeaders {
  return origins === '*' ? { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED } : {};
}

/** Is `req` a preflight: OPTIONS, from a page, asking whether a method may be used? */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
}

/**
 * The answer to a preflight: 204, and the methods and headers allowed when
 * the origin and method are (else no CORS header, so that the browser
 * refuses the request it was asking about).
 */
export function preflightHeaders(policy: CorsPolicy, req: IncomingMessage): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' };
  const origin = policy.origins !== '*' && policy.origins.length === 0 ? undefined : allowedOrigin(policy, req.headers.origin);
  const method = String(req.headers['access-control-request-method']).toUpperCase();
  if (origin === undefined || !METHODS.split(', ').includes(method)) return headers;
  headers['Access-Control-Allow-Origin'] = origin;
  headers['Access-Control-Allow-Methods'] = method;
  const asked = req.headers['access-control-request-headers'];
  if (asked !== undefined && asked !== '') headers['Access-Control-Allow-Headers'] = asked;
  headers['Access-Control-Max-Age'] = String(policy.maxAgeSeconds);
  return headers;
}
