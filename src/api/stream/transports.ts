/**
 * GET /api/v2/stream/orders over its two transports, as the original's
 * gateway serves it: plain HTTP, a long chunked response of newline-delimited
 * JSON frames (gzip-compressed and flushed per frame when the client accepts
 * it), and WebSocket, one text message per frame (the `ws` library). Refusals
 * before the first frame are the original's bodies with their HTTP status;
 * where the original drops the connection, we say why: an error frame, and
 * over WebSocket a close frame with a code and its reason.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { constants, createGzip, type Gzip } from 'node:zlib';
import { WebSocket, WebSocketServer } from 'ws';
import { ApiError, GrpcCode, HttpRefusalError, InternalApiError, StreamLimitError } from '../errors.js';
import { ALLOWED_METHODS } from '../http-server.js';
import type { HeaderList } from '../answer-headers.js';
import { refuseOnSocket, writeRefusal } from '../refusal.js';
import { errorFrame, refusalBody } from './frames.js';
import type { Frame, FrameSink, OrderStreamHub, StreamEnd } from './hub.js';
import { readStreamRequest, type StreamRequest } from './request.js';

/**
 * Bytes a client's WebSocket message may have: the stream takes none (the
 * subscription is the URL's query, as the original's), so only a stray
 * small one is let through, ignored.
 */
export const MAX_CLIENT_MESSAGE_BYTES = 4 * 1024;

/** Milliseconds an ended stream's client has to read what is left before its connection is cut (`ws`'s close timeout). */
const CLOSE_GRACE_MS = 30_000;

/** The reason a WebSocket closed with 1009 for a client's message past MAX_CLIENT_MESSAGE_BYTES gives. */
export const MESSAGE_TOO_BIG = 'message too big';

/** What the transports are told: the per-client limit, the ping interval, the headers of a refusal. */
export interface StreamOptions {
  /** Concurrent streams one client address may hold (the original: 250). */
  perClient: number;
  /** Seconds between WebSocket pings; a client that misses one is dropped. */
  pingSeconds: number;
  /** Milliseconds an ended HTTP stream's client has to read what is left; CLOSE_GRACE_MS if absent. */
  closeGraceMs?: number;
  /** Headers a refusal of a request carries beside the common ones: CORS, the last block known. */
  refusalHeaders: (req: IncomingMessage) => HeaderList;
}

/** The error frame a stream ends with, and its WebSocket close code. */
function endFrame(reason: StreamEnd): { frame?: string; code: number; text: string } {
  switch (reason.kind) {
    case 'tooSlow': {
      const text = reason.shared === true
        ? `client too slow: ${reason.buffered} bytes unsent while this server's streams hold the ${reason.limit} they may together`
        : `client too slow: ${reason.buffered} bytes unsent, over the ${reason.limit} allowed`;
      return { frame: errorFrame(13, `internal stream failure: ${text}`), code: 1008, text };
    }
    case 'failed':
      return { frame: errorFrame(13, `internal stream failure: ${reason.message}`), code: 1011, text: reason.message.slice(0, 120) };
    case 'shuttingDown':
      return { code: 1001, text: 'server shutting down' };
  }
}

/** Counts streams per client address, refusing beyond the limit. */
class ClientCounts {
  private readonly counts = new Map<string, number>();
  constructor(private readonly limit: number) {}

  /** A release function, or undefined when the client holds its limit already. */
  take(address: string): (() => void) | undefined {
    const n = this.counts.get(address) ?? 0;
    if (n >= this.limit) return undefined;
    this.counts.set(address, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(address) ?? 1) - 1;
      if (left <= 0) this.counts.delete(address);
      else this.counts.set(address, left);
    };
  }
}

/** The request read, or the refusal of it. */
function readRequest(url: string): StreamRequest | ApiError {
  try {
    return readStreamRequest(url);
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
}

/** The request, or its refusal: a bad request, or a client that holds its limit of streams already. */
function admit(request: StreamRequest | ApiError, release: (() => void) | undefined): ApiError | undefined {
  if (request instanceof ApiError) return request;
  return release === undefined ? new StreamLimitError('client reached max subscription allowed') : undefined;
}

export class OrderStreams {
  private readonly clients: ClientCounts;
  private readonly sockets: WebSocketServer;

  constructor(private readonly hub: OrderStreamHub, private readonly options: StreamOptions) {
    this.clients = new ClientCounts(options.perClient);
    this.sockets = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      // Frames a client sends are ignored, as the original ignores them; a big one is refused as its header arrives.
      maxPayload: MAX_CLIENT_MESSAGE_BYTES,
      // The original answers a `Bearer ...` subprotocol with `Bearer`.
      handleProtocols: (protocols) => [...protocols].find((p) => p.startsWith('Bearer')) === undefined ? false : 'Bearer',
    });
    // A handshake `ws` refuses (no key, a version it does not speak, another method) is refused in the envelope, not in its plain text.
    this.sockets.on('wsClientError', (error: Error, socket: Duplex, req: IncomingMessage) => {
      const wrongMethod = req.method !== 'GET';
      const refusal = new HttpRefusalError(`not a WebSocket handshake this server takes: ${error.message}`, wrongMethod
        ? { status: 405, grpc: GrpcCode.Unimplemented }
        : { status: 400 });
      refuseOnSocket(socket, refusal, [
        ...options.refusalHeaders(req),
        ...(wrongMethod ? ['Allow', ALLOWED_METHODS] : []),
        ...(/Version/.test(error.message) ? ['Sec-WebSocket-Version', '13, 8'] : []),
      ]);
    });
  }

  /** A plain HTTP request for the stream: a chunked response of frames, one per line. */
  streamOverHttp(req: IncomingMessage, res: ServerResponse): void {
    const request = readRequest(req.url ?? '');
    const release = request instanceof ApiError ? undefined : this.clients.take(req.socket.remoteAddress ?? '');
    const refusal = admit(request, release);
    if (refusal !== undefined) return writeRefusal(res, refusal, this.options.refusalHeaders(req), Buffer.from(refusalBody(refusal)));
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) ? createGzip() : undefined;
    const out: NodeJS.WritableStream = gzip ?? res;
    // The status goes out with the first frame: a resume the store cannot serve is still refused with its own.
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      res.writeHead(200, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
      gzip?.pipe(res);
    };
    const sink: FrameSink = {
      send: (frame: Frame) => {
        start();
        writeFrame(out, gzip, frame.buffer, true);
      },
      buffered: () => res.writableLength + (gzip?.writableLength ?? 0),
      end: (reason) => {
        start();
        const { frame } = endFrame(reason);
        // The original's error frame is the last thing, with no newline after it.
        if (frame !== undefined) writeFrame(out, gzip, Buffer.from(frame), false);
        out.end();
        // A client that never reads would hold what is unsent for as long as it stays: it gets ws's own close timeout.
        const timer = setTimeout(() => res.destroy(), this.options.closeGraceMs ?? CLOSE_GRACE_MS).unref();
        res.once('close', () => clearTimeout(timer));
      },
    };
    const refuse = (r: ApiError) => {
      if (started) return sink.end({ kind: 'failed', message: r.message });
      started = true;
      writeRefusal(res, r, this.options.refusalHeaders(req), Buffer.from(refusalBody(r)));
    };
    // Once subscribed, the status goes out even with no frame yet: a resume may be owed nothing until the next block.
    this.run(request as StreamRequest, sink, refuse, release!, (stop) => res.once('close', stop), () => {
      start();
      res.flushHeaders();
    });
  }

  /** An upgrade request: a WebSocket stream, or a refusal. */
  serveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.sockets.handleUpgrade(req, socket, head, (ws) => {
      const request = readRequest(req.url ?? '');
      const release = request instanceof ApiError ? undefined : this.clients.take(req.socket.remoteAddress ?? '');
      const refusal = admit(request, release);
      if (refusal !== undefined) {
        // The original sends the refusal as the stream's one frame; we close saying so, where it drops the connection.
        refuseSocket(ws, refusal);
        return;
      }
      let alive = true;
      const ping = setInterval(() => {
        if (!alive) return ws.terminate();
        alive = false;
        ws.ping();
      }, this.options.pingSeconds * 1000);
      ws.on('pong', () => (alive = true));
      ws.on('close', () => clearInterval(ping));
      closeTooBig(ws);
      // `ws` sends its close frame before it reports a fault of the client's frames: cutting a closing socket would lose that frame.
      ws.on('error', () => {
        if (ws.readyState !== WebSocket.CLOSING) ws.terminate();
      });
      const sink: FrameSink = {
        send: (frame) => ws.send(frame.buffer, { binary: false }),
        buffered: () => ws.bufferedAmount,
        end: (reason) => {
          const { frame, code, text } = endFrame(reason);
          if (frame !== undefined && ws.readyState === WebSocket.OPEN) ws.send(frame);
          ws.close(code, text);
        },
      };
      const refuse = (r: ApiError) => refuseSocket(ws, r);
      this.run(request as StreamRequest, sink, refuse, release!, (stop) => ws.once('close', stop));
    });
  }

  /** Subscribes, and unsubscribes when the client goes. */
  private run(
    request: StreamRequest, sink: FrameSink, refuse: (r: ApiError) => void, release: () => void, onGone: (stop: () => void) => void,
    onSubscribed?: () => void,
  ): void {
    let unsubscribe: (() => void) | undefined;
    let gone = false;
    onGone(() => {
      gone = true;
      release();
      unsubscribe?.();
    });
    this.hub.subscribe(request.filter, sink, request.fromBlock).then(
      (stop) => {
        if (!gone) onSubscribed?.();
        if (gone) stop();
        else unsubscribe = stop;
      },
      (e: unknown) => {
        release();
        if (gone) return;
        // A store that fails before the first frame is a 500 with its error frame, as a refusal is; after it, an error frame ends the stream.
        refuse(e instanceof ApiError ? e : new InternalApiError(`internal stream failure: ${e instanceof Error ? e.message : String(e)}`));
      },
    );
  }

  close(): void {
    this.hub.close();
    for (const ws of this.sockets.clients) ws.terminate();
    this.sockets.close();
  }
}

/**
 * A client's message past maxPayload closes with 1009 and a reason at once:
 * `ws` closes with 1009 but no reason, so its receiver's fault is heard
 * first (a private field of `ws` 8; test/api/stream/transports.test.ts
 * shows the reason arrives).
 */
function closeTooBig(ws: WebSocket): void {
  const receiver = (ws as unknown as { _receiver?: NodeJS.EventEmitter })._receiver;
  receiver?.prependListener('error', (e: Error & { code?: string }) => {
    if (e.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' && ws.readyState === WebSocket.OPEN) ws.close(1009, MESSAGE_TOO_BIG);
  });
}

/** A refusal over a WebSocket: its body as the one frame, then a close saying why. */
function refuseSocket(ws: WebSocket, e: ApiError): void {
  ws.send(refusalBody(e));
  ws.close(e.httpStatus === 429 ? 1013 : 1008, e.message.slice(0, 120));
}

/** Writes one frame and its newline; through gzip, flushed so that the client gets it now. */
function writeFrame(out: NodeJS.WritableStream, gzip: Gzip | undefined, frame: Buffer, newline: boolean): void {
  out.write(frame);
  if (newline) out.write('\n');
  gzip?.flush(constants.Z_SYNC_FLUSH);
}
