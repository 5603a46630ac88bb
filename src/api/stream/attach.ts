/**
 * GET /api/v2/stream/orders on a server: each HTTP process has its own hub,
 * told of every block the store commits (by this process's writer thread or
 * another instance's: QueryStore.watchBlocks), and serves both transports.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { QueryStore } from '../../store/store.js';
import { RouteNotFoundError, UnavailableError } from '../errors.js';
import type { KnownBlock } from '../known-block.js';
import { pathOf } from '../query.js';
import { refuseOnSocket } from '../raw-refusal.js';
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
/** Seconds between WebSocket pings; a client that misses one is dropped. */
const PING_SECONDS = 30;

export interface StreamServer {
  /** Serves `req` if it is a stream request over plain HTTP; false leaves it to the others. */
  serveHttp(req: IncomingMessage, res: ServerResponse): boolean;
  /** Subscribers now. */
  readonly subscribers: number;
  /** Ends every stream, and stops watching the store. */
  close(): void;
}

export function attachOrderStreams(
  server: Server, store: QueryStore, options: { perClient: number; known: KnownBlock; closing: () => boolean },
): StreamServer {
  const hub = new OrderStreamHub(streamSource(store), { bufferBytes: STREAM_BUFFER_BYTES });
  const streams = new OrderStreams(hub, { perClient: options.perClient, pingSeconds: PING_SECONDS });
  const stopWatching = store.watchBlocks(() => hub.blockCommitted());
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (options.closing()) return refuseOnSocket(socket, new UnavailableError('the server is shutting down: try again, on another instance'), options.known.headers());
    if (pathOf(req.url ?? '') !== STREAM_ORDERS_PATH) return refuseOnSocket(socket, new RouteNotFoundError('Not Found'), options.known.headers());
    // A stream may be quiet for long: not an idle connection.
    (socket as Duplex & { setTimeout?: (ms: number) => void }).setTimeout?.(0);
    streams.serveUpgrade(req, socket, head);
  });
  return {
    serveHttp(req, res) {
      if (req.method !== 'GET' || pathOf(req.url ?? '') !== STREAM_ORDERS_PATH) return false;
      req.socket.setTimeout(0);
      streams.serveHttp(req, res);
      return true;
    },
    get subscribers() {
      return hub.size;
    },
    close() {
      stopWatching();
      streams.close();
    },
  };
}
