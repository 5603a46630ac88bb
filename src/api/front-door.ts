/**
 * What every request meets before either path answers it (the fast path,
 * ./fast-path.ts, or Fastify): the headers every answer carries (no
 * sniffing, CORS), preflights answered, the rate limit, and a server
 * shutting down. One place, so that both paths send the same headers; it is
 * called from the server's request listener, and from a Fastify hook for
 * requests that reach Fastify without it (inject(), in tests). A request is
 * let through once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { corsHeaders, isPreflight, preflightHeaders, type CorsPolicy } from './cors.js';
import { HttpRefusalError, RateLimitedError, UnavailableError } from './errors.js';
import type { KnownBlock } from './known-block.js';
import { pathOf } from './query.js';
import { EVERY_ANSWER, writeRefusal } from './raw-refusal.js';
import type { RateLimiter } from './rate-limit.js';

const SEEN = Symbol('front door passed');

export interface FrontDoorOptions {
  cors: CorsPolicy;
  rateLimiter: RateLimiter | undefined;
  known: KnownBlock;
  /** Paths no rate limit applies to: the load balancer's checks. */
  unlimited: ReadonlySet<string>;
}

export class FrontDoor {
  /** Set once the server starts closing: requests still arriving on open connections are told to go elsewhere. */
  closing = false;

  constructor(private readonly options: FrontDoorOptions) {}

  /** Sets the headers every answer carries on `res`; false when this answered the request itself. */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    const marked = req as IncomingMessage & { [SEEN]?: boolean };
    if (marked[SEEN]) return true;
    marked[SEEN] = true;
    const { cors, rateLimiter, known, unlimited } = this.options;
    for (const [name, value] of Object.entries({ ...EVERY_ANSWER, ...corsHeaders(cors, req) })) res.setHeader(name, value!);
    // No route reads a body: the connection ends with the answer, and says so, rather than wait for a body that may never end.
    if (hasBody(req)) res.setHeader('Connection', 'close');
    if (this.closing) {
      writeRefusal(res, new UnavailableError('the server is shutting down: try again, on another instance'), {
        ...known.headers(), connection: 'close',
      });
      return false;
    }
    // HTTP/1.1 requires one (RFC 9112, 3.2); Node's own refusal of a request without it has no body.
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      writeRefusal(res, new HttpRefusalError('an HTTP/1.1 request needs a Host header'), known.headers());
      return false;
    }
    if ((cors.origins === '*' || cors.origins.length > 0) && isPreflight(req)) {
      res.writeHead(204, preflightHeaders(cors, req)).end();
      return false;
    }
    if (rateLimiter !== undefined && !unlimited.has(pathOf(req.url ?? ''))) {
      const decision = rateLimiter.take(req);
      for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value!);
      if (!decision.allowed) {
        writeRefusal(res, new RateLimitedError(`rate limit exceeded for ${decision.client}: try again in ${decision.retryAfterSeconds} s`), {
          ...known.headers(), 'Retry-After': String(decision.retryAfterSeconds),
        });
        return false;
      }
    }
    return true;
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

