/**
 * GET /api/v2/stream/orders on a server: each HTTP process has its own hub,
 * told of every block the store commits (by this process's writer thread or
 * another instance's: QueryStore.watchBlocks) while it has subscribers, and
 * serves both transports.
 */
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { QueryStore } from '../../store/store.js';
import { RouteNotFoundError } from '../errors.js';
import type { HeaderList } from '../answer-headers.js';
import { pathOf } from '../query.js';
import { refuseOnSocket } from '../refusal.js';
import { exemptFromStalls } from '../stalled-connections.js';
import { OrderStreamHub } from './hub.js';
import { STREAM_ORDERS_PATH } from './request.js';
import { streamSource } from './source.js';
import { OrderStreams } from './transports.js';

/**
 * Bytes a subscriber may leave unread before it is closed as too slow: a
 * few hundred update frames, seconds of a busy network, and bounded, so that
 * 10,000 subscribers cannot hold gigabytes.
 */
export const STREAM_BUFFER_BYTES = 1 << 20;
/**
 * Bytes all the subscribers of an HTTP process may leave unread together:
 * what fits under its memory ceiling beside its caches (BENCHMARKS.md,
 * "Memory ceiling"), where 1,000 connections of 1 MiB each would not.
 */
export const STREAM_SHARED_BUFFER_BYTES = 32 << 20;
/** Seconds between WebSocket pings; a client that misses one is dropped. */
const PING_SECONDS = 30;

export interface StreamServer {
  /** Serves `req` if it is a stream request over plain HTTP; false leaves it to the others. */
  streamOverHttp(req: IncomingMessage, res: ServerResponse): boolean;
  /** Subscribers now. */
  readonly subscribers: number;
  /** Ends every stream, and stops watching the store. */
  close(): void;
}

/** Does `req` ask to become a WebSocket (`Upgrade` names it among its protocols)? */
function asksForWebSocket(req: IncomingMessage): boolean {
  return String(req.headers.upgrade ?? '').split(',').some((p) => p.trim().toLowerCase() === 'websocket');
}

/**
 * Answers over HTTP/1.1 a request that asks to upgrade to something other
 * than a WebSocket (`curl --http2` asks every plain-HTTP request for `h2c`),
 * as RFC 9110 (7.8) lets a server ignore an upgrade: Node hands every such
 * request to the `upgrade` listener, so it is given back to the request
 * listener here. Node has let go of the connection's parser, so the
 * connection ends with the answer.
 */
function answerWithoutUpgrade(server: Server, req: IncomingMessage, socket: Duplex): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => socket.end());
  server.emit('request', req, res);
}

export function attachOrderStreams(
  server: Server, store: QueryStore, options: {
    perClient: number;
    /** What a refusal of a stream request carries beside the common headers: CORS, the block known. */
    refusalHeaders: (req: IncomingMessage) => HeaderList;
    /** The front door of an upgrade (a server closing, the rate limit): false when it refused it on the socket. */
    admit: (req: IncomingMessage, socket: Duplex) => boolean;
  },
): StreamServer {
  const hub = new OrderStreamHub(streamSource(store), {
    bufferBytes: STREAM_BUFFER_BYTES, sharedBufferBytes: STREAM_SHARED_BUFFER_BYTES, watchBlocks: (onBlock) => store.watchBlocks(onBlock),
  });
  const streams = new OrderStreams(hub, {
    perClient: options.perClient, pingSeconds: PING_SECONDS, refusalHeaders: options.refusalHeaders,
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!asksForWebSocket(req)) return answerWithoutUpgrade(server, req, socket);
    if (!options.admit(req, socket)) return;
    if (pathOf(req.url ?? '') !== STREAM_ORDERS_PATH) return refuseOnSocket(socket, new RouteNotFoundError('Not Found'), options.refusalHeaders(req));
    // A stream may be quiet for long, and hold what its client has not read yet: not an idle or stalled connection.
    (socket as Duplex & { setTimeout?: (ms: number) => void }).setTimeout?.(0);
    exemptFromStalls(socket);
    streams.serveUpgrade(req, socket, head);
  });
  return {
    streamOverHttp(req, res) {
      if (req.method !== 'GET' || pathOf(req.url ?? '') !== STREAM_ORDERS_PATH) return false;
      req.socket.setTimeout(0);
      exemptFromStalls(req.socket);
      streams.streamOverHttp(req, res);
      return true;
    },
    get subscribers() {
      return hub.size;
    },
    close() {
      streams.close();
    },
  };
}
