/**
 * What every request meets before either path answers it (the fast path,
 * ./fast-path.ts, or Fastify): the headers its answer or refusal will carry
 * (CORS, the rate limit's state: the door's headers, written beside the
 * common ones by ./answer-headers.ts), preflights answered, the rate limit,
 * a request without Host, and a server shutting down. One place, so that
 * both paths send the same headers; it is called from the server's request
 * listener, and from a Fastify hook for requests that reach Fastify without
 * it (inject(), in tests). A request is let through once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { COMMON_HEADERS, headerList, merged, setHeaders, type HeaderList } from './answer-headers.js';
import { corsHeaders, isPreflight, preflightHeaders, type CorsPolicy } from './cors.js';
import { HttpRefusalError, RateLimitedError, UnavailableError } from './errors.js';
import type { KnownBlock } from './known-block.js';
import { pathOf } from './query.js';
import type { RateLimiter } from './rate-limit.js';
import { refuseOnSocket, writeRefusal } from './refusal.js';

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
  /**
   * The door's headers when they do not depend on the request (every origin
   * allowed, or none, and no rate limit): one list for every request, so
   * that what is built from it can be kept (./fast-path.ts).
   */
  readonly shared: HeaderList;

  constructor(private readonly options: FrontDoorOptions) {
    this.shared = options.cors.origins === '*' ? headerList(corsHeaders(options.cors, undefined)) : [];
  }

  /**
   * The door's headers for `req`'s answer; undefined when the door answered
   * the request itself (a refusal, a preflight). Nothing is set on `res`:
   * the fast path writes them with its answer, setOn() sets them for Fastify.
   */
  admit(req: IncomingMessage, res: ServerResponse): HeaderList | undefined {
    const { cors, known, rateLimiter } = this.options;
    let headers = this.corsOf(req);
    if (this.closing) {
      writeRefusal(res, shuttingDown(), [...headers, ...known.headers(), 'Connection', 'close']);
      return undefined;
    }
    // No route reads a body: the connection ends with the answer, and says so, rather than wait for a body that may never end.
    if (hasBody(req)) headers = [...headers, 'Connection', 'close'];
    // HTTP/1.1 requires one (RFC 9112, 3.2); Node's own refusal of a request without it has no body.
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      writeRefusal(res, new HttpRefusalError('an HTTP/1.1 request needs a Host header'), [...headers, ...known.headers()]);
      return undefined;
    }
    if ((cors.origins === '*' || cors.origins.length > 0) && isPreflight(req)) {
      // Its own Vary and CORS headers, in place of the door's.
      res.writeHead(204, merged([...COMMON_HEADERS, ...headers], headerList(preflightHeaders(cors, req)))).end();
      return undefined;
    }
    if (rateLimiter === undefined) return headers;
    const limited = this.rateLimited(req, headers);
    if (limited.refusal !== undefined) {
      writeRefusal(res, limited.refusal, [...limited.headers, ...known.headers(), 'Retry-After', limited.retryAfter]);
      return undefined;
    }
    return limited.headers;
  }

  /** Sets the door's headers (and the common ones) on `res`, for Fastify or the stream to send; `req` is not admitted again. */
  setOn(req: IncomingMessage, res: ServerResponse, headers: HeaderList): void {
    (req as IncomingMessage & { [SEEN]?: boolean })[SEEN] = true;
    setHeaders(res, COMMON_HEADERS);
    setHeaders(res, headers);
  }

  /** For a request that reached Fastify without the listener (inject()): admitted, and its headers set; false when the door answered it. */
  admitOnce(req: IncomingMessage, res: ServerResponse): boolean {
    if ((req as IncomingMessage & { [SEEN]?: boolean })[SEEN]) return true;
    const headers = this.admit(req, res);
    if (headers === undefined) return false;
    this.setOn(req, res, headers);
    return true;
  }

  /**
   * A WebSocket upgrade, which has no response to admit: refused on its
   * socket when the server is closing or its client is past the rate limit
   * (each stream starts with a snapshot read: not to be had for free).
   * False when refused.
   */
  admitUpgrade(req: IncomingMessage, socket: Duplex): boolean {
    if (this.closing) {
      refuseOnSocket(socket, shuttingDown(), this.refusalHeaders(req));
      return false;
    }
    const limited = this.rateLimited(req, this.corsOf(req));
    if (limited.refusal === undefined) return true;
    refuseOnSocket(socket, limited.refusal, [...limited.headers, ...this.options.known.headers(), 'Retry-After', limited.retryAfter]);
    return false;
  }

  /** What a refusal of `req` written outside the door carries beside the common headers (a WebSocket's, on its socket): CORS, the block known. */
  refusalHeaders(req: IncomingMessage): HeaderList {
    return [...this.corsOf(req), ...this.options.known.headers()];
  }

  /** The CORS headers of `req`'s response. */
  private corsOf(req: IncomingMessage): HeaderList {
    const { cors } = this.options;
    return cors.origins !== '*' && cors.origins.length > 0 ? headerList(corsHeaders(cors, req.headers.origin)) : this.shared;
  }

  /** `headers` and the rate limit's for `req`, and its refusal when past the limit. */
  private rateLimited(req: IncomingMessage, headers: HeaderList): { headers: HeaderList; refusal?: RateLimitedError; retryAfter: string } {
    const { rateLimiter, unlimited } = this.options;
    if (rateLimiter === undefined || unlimited.has(pathOf(req.url ?? ''))) return { headers, retryAfter: '' };
    const decision = rateLimiter.take(req);
    const retryAfter = String(decision.retryAfterSeconds);
    const limitedHeaders = [...headers, ...headerList(decision.headers)];
    if (decision.allowed) return { headers: limitedHeaders, retryAfter };
    return {
      headers: limitedHeaders, retryAfter,
      refusal: new RateLimitedError(`rate limit exceeded for ${decision.client}: try again in ${decision.retryAfterSeconds} s`),
    };
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
