/**
 * The HTTP server under Fastify, made here rather than by Fastify so that
 * what Node decides before any route runs is bounded and answered in the
 * envelope too: how long a request's head may take and a connection may
 * idle, how many connections a process holds, how long a head may be, and
 * what Node's parser refuses (a malformed request, a head too long or too
 * slow), which it would otherwise answer with a bare status line.
 */
import { Server, type IncomingMessage, type RequestListener, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { asLedgerError, ListenError, type LedgerError } from '../errors.js';
import { headerList, type HeaderList } from './answer-headers.js';
import { corsHeadersUnread } from './cors.js';
import { GrpcCode, HttpRefusalError, type ApiError } from './errors.js';
import type { HttpOptions } from './http-options.js';
import type { KnownBlock } from './known-block.js';
import { refuseOnSocket, writeRefusal } from './refusal.js';
import { StalledConnections } from './stalled-connections.js';

/** How often Node looks for heads overdue: often enough that a timeout is kept within a second. */
function checkingIntervalMs(headTimeoutMs: number): number {
  return Math.min(1000, Math.max(50, Math.floor(headTimeoutMs / 4)));
}

/** Answers under way when the server closes (serve stopped) have this long to be sent; then every connection left is cut. */
export const CLOSE_GRACE_MS = 10_000;

/** Connections refused over the limit are logged at most this often. */
const DROP_LOG_INTERVAL_MS = 10_000;

type ParserError = Error & { code?: string; reason?: string; rawPacket?: Buffer };

/** A request line of the right shape: a method token, a target, a version. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/\d\.\d\r?\n/;

/** What Node's parser (or its timer) refused, as a refusal of the catalogue. */
export function parserRefusal(error: ParserError, options: HttpOptions): ApiError | undefined {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return new HttpRefusalError(
        `the request's URL and headers are longer than the ${options.maxHeadBytes} bytes this server takes`, { status: 431 },
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpRefusalError(`the request did not arrive within ${options.headTimeoutMs / 1000} s`, {
        status: 408, grpc: GrpcCode.DeadlineExceeded,
      });
    case 'HPE_INVALID_METHOD':
      // A well-formed request with a method we do not serve: 405, a client's fault, where the original's
      // gateway answers 501 (docs/compatibility.md); anything else is not HTTP.
      if (REQUEST_LINE.test(error.rawPacket?.toString('latin1') ?? '')) return methodRefusal('a method this server does not know');
      return new HttpRefusalError(`a malformed HTTP request: ${error.reason ?? error.message}`);
    default:
      return new HttpRefusalError(`a malformed HTTP request: ${error.reason ?? error.message}`);
  }
}

/** The methods every route answers, for the Allow header of a 405. */
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

export function methodRefusal(reason: string): ApiError {
  return new HttpRefusalError(`${reason}: this server answers ${ALLOWED_METHODS}`, { status: 405, grpc: GrpcCode.Unimplemented });
}

/**
 * Requests a connection may have waiting behind the one being answered
 * (HTTP/1.1 pipelining); one more closes the connection. Browsers and the
 * usual clients send one at a time; this is for one that sends thousands.
 */
export const MAX_PIPELINED = 64;

const WAITING = Symbol('requests waiting on this connection');

/**
 * Pipelined requests on one connection are handled one at a time, each when
 * the answer before it has been handed to the socket, as Go's server (the
 * original's) does. Node would run them all at once and hold every answer
 * until the client reads them: one client pipelining pages without reading
 * made a process hold ~10 MB a connection, all its answers at once
 * (BENCHMARKS.md "Pipelined requests one at a time"). Node gives a queued
 * response its socket, and says so ('socket'), once the one before it has
 * finished.
 */
export function oneAtATime(listener: RequestListener, maxWaiting: number): RequestListener {
  return (req, res) => {
    if (res.socket !== null) return listener(req, res);
    const socket = req.socket as IncomingMessage['socket'] & { [WAITING]?: number };
    const waiting = (socket[WAITING] ?? 0) + 1;
    if (waiting > maxWaiting) {
      socket.destroy();
      return;
    }
    socket[WAITING] = waiting;
    res.once('socket', () => {
      socket[WAITING]!--;
      listener(req, res);
    });
  };
}

export interface HttpServerHooks {
  known: KnownBlock;
  /** What a refusal of a request that was read carries beside the common headers: CORS, the block known (the front door's). */
  refusalHeaders: (req: IncomingMessage) => HeaderList;
  warn: (message: string) => void;
  /** CLOSE_GRACE_MS if absent. */
  closeGraceMs?: number;
}

/**
 * A server whose close() ends: Node's closes only the connections between
 * requests and stops checking heads for their timeout, so a connection that
 * has sent nothing (a browser's preconnect, say), or a head that never ends,
 * or an answer its client does not read, kept the server, and `serve` on
 * SIGTERM, open for as long as the client stayed. Here one that has sent
 * nothing is closed at once, and whatever is left after the grace is cut.
 */
class ClosingServer extends Server {
  /** Every connection open, upgraded ones (streams over WebSocket) too: Node forgets those. */
  readonly open = new Set<Socket>();
  private graceTimer: NodeJS.Timeout | undefined;

  constructor(options: ServerOptions, listener: RequestListener, private readonly graceMs: number) {
    super(options, listener);
    this.once('close', () => clearTimeout(this.graceTimer));
  }

  track(socket: Socket): void {
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
  }

  override close(callback?: (err?: Error) => void): this {
    super.close(callback);
    for (const socket of this.open) if (socket.bytesRead === 0) socket.destroy();
    this.graceTimer ??= setTimeout(() => {
      for (const socket of this.open) socket.destroy();
    }, this.graceMs).unref();
    return this;
  }
}

/**
 * Closes each connection past `max` as it comes, and watches the others for stalls. Not server.maxConnections:
 * under node:cluster (serve --workers N) a process over it hands the
 * connection back to the primary, which offers it to another, and another,
 * and the client waits, connected and unanswered, for as long as all are full.
 */
function limitConnections(server: ClosingServer, max: number, warn: (message: string) => void, stalled: StalledConnections): void {
  let dropped = 0;
  let logged = 0;
  server.on('connection', (socket: Socket) => {
    if (server.open.size >= max) {
      socket.destroy();
      dropped++;
      const now = Date.now();
      if (now - logged < DROP_LOG_INTERVAL_MS) return;
      warn(`${dropped} connections closed as they came: this process holds its ${max} (--max-connections)`);
      dropped = 0;
      logged = now;
      return;
    }
    server.track(socket);
    stalled.watch(socket);
  });
}

/** A server calling `listener` for each request, within `options`' limits. */
export function createHttpServer(options: HttpOptions, listener: RequestListener, hooks: HttpServerHooks): Server {
  const server = new ClosingServer({
    maxHeaderSize: options.maxHeadBytes,
    headersTimeout: options.headTimeoutMs,
    // A GET has no body: the whole request is its head.
    requestTimeout: options.headTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(options.headTimeoutMs),
    // Refused by the front door instead (./front-door.ts), in the envelope.
    requireHostHeader: false,
  }, oneAtATime(listener, MAX_PIPELINED), hooks.closeGraceMs ?? CLOSE_GRACE_MS);
  server.keepAliveTimeout = options.idleTimeoutMs;
  // A connection that holds an answer its client does not take, moving nothing either way, is closed too,
  // though not under a query that may run for its whole time limit.
  const stalled = new StalledConnections(Math.max(options.idleTimeoutMs, options.queryTimeoutMs + 5000));
  server.on('listening', () => stalled.start());
  server.on('close', () => stalled.stop());
  limitConnections(server, options.maxConnections, hooks.warn, stalled);
  // A request Node could not read has no Origin to answer: every origin's, when every origin is allowed.
  const unreadCors = headerList(corsHeadersUnread(options.corsOrigins));
  server.on('clientError', (error: ParserError, socket: Duplex) => {
    const refusal = parserRefusal(error, options);
    if (refusal === undefined) socket.destroy();
    else {
      refuseOnSocket(socket, refusal, [...unreadCors, ...hooks.known.headers(), ...(refusal.httpStatus === 405 ? ['Allow', ALLOWED_METHODS] : [])]);
    }
  });
  // Without a listener Node closes a CONNECT's socket without a word.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    refuseOnSocket(socket, methodRefusal('CONNECT: this server is no proxy'), [...unreadCors, ...hooks.known.headers(), 'Allow', ALLOWED_METHODS]);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    writeRefusal(res, new HttpRefusalError(`Expect: ${req.headers.expect}: not an expectation this server meets`, { status: 417 }), hooks.refusalHeaders(req));
  });
  return server;
}

/** Why the server could not listen on `host`:`port`, on one line: an error of the catalogue. */
export function listenError(e: unknown, host: string, port: number): LedgerError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const where = `cannot listen on ${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE': return new ListenError(`${where}: the port is in use (another process listens on it; --port chooses another)`, { cause: e });
    case 'EACCES': return new ListenError(`${where}: permission denied (ports below 1024 need privileges)`, { cause: e });
    case 'EADDRNOTAVAIL': return new ListenError(`${where}: no such address on this host (--host)`, { cause: e });
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return new ListenError(`${where}: the host name does not resolve (--host)`, { cause: e });
    default: return asLedgerError(e);
  }
}
