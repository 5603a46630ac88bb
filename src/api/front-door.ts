/**
 * What every request meets before either path answers it (the fast path,
 * ./fast-path.ts, or Fastify): the headers every answer carries (no
 * sniffing, CORS), preflights answered, the rate limit, and a server
 * shutting down. One place, so that both paths send the same headers; it is
 * called from the server's request listener, and from a Fastify hook for
 * requests that reach Fastify without it (inject(), in tests). A request is
 * let through once.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { corsHeaders, isPreflight, preflightHeaders, type CorsPolicy } from './cors.js';
import { HttpRefusalError, RateLimitedError, UnavailableError } from './errors.js';
import type { KnownBlock } from './known-block.js';
import { pathOf } from './query.js';
import { EVERY_ANSWER, refuseOnSocket, writeRefusal } from './raw-refusal.js';
import type { RateLimiter } from './rate-limit.js';

const SEEN = Symbol('front door passed');

/** The refusal of a request that reaches a server shutting down. */
const shuttingDown = () => new UnavailableError('the server is shutting down: try again, on another instance');

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
    const { cors, known } = this.options;
    for (const [name, value] of Object.entries({ ...EVERY_ANSWER, ...corsHeaders(cors, req) })) res.setHeader(name, value!);
    // No route reads a body: the connection ends with the answer, and says so, rather than wait for a body that may never end.
    if (hasBody(req)) res.setHeader('Connection', 'close');
    if (this.closing) {
      writeRefusal(res, shuttingDown(), {
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
    const limited = this.rateLimited(req);
    if (limited !== undefined) {
      for (const [name, value] of Object.entries(limited.headers)) res.setHeader(name, value!);
      if (limited.refusal !== undefined) {
        writeRefusal(res, limited.refusal, { ...known.headers(), 'Retry-After': limited.retryAfter });
        return false;
      }
    }
    return true;
  }

  /**
   * A WebSocket upgrade, which has no response to admit: refused on its
   * socket when the server is closing or its client is past the rate limit
   * (each stream starts with a snapshot read: not to be had for free).
   * False when refused.
   */
  admitUpgrade(req: IncomingMessage, socket: Duplex): boolean {
    const { known } = this.options;
    if (this.closing) {
      refuseOnSocket(socket, shuttingDown(), known.headers());
      return false;
    }
    const limited = this.rateLimited(req);
    if (limited?.refusal === undefined) return true;
    refuseOnSocket(socket, limited.refusal, { ...limited.headers, ...known.headers(), 'Retry-After': limited.retryAfter });
    return false;
  }

  /** The rate limit's headers for `req`, and its refusal when past the limit; undefined when no limit applies. */
  private rateLimited(req: IncomingMessage): { headers: OutgoingHttpHeaders; refusal?: RateLimitedError; retryAfter: string } | undefined {
    const { rateLimiter, unlimited } = this.options;
    if (rateLimiter === undefined || unlimited.has(pathOf(req.url ?? ''))) return undefined;
    const decision = rateLimiter.take(req);
    const retryAfter = String(decision.retryAfterSeconds);
    if (decision.allowed) return { headers: decision.headers, retryAfter };
    return {
      headers: decision.headers, retryAfter,
      refusal: new RateLimitedError(`rate limit exceeded for ${decision.client}: try again in ${decision.retryAfterSeconds} s`),
    };
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

