/** The HTTP API: routes, the original's error body, compression. */
import { createServer } from 'node:http';
import compress from '@fastify/compress';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { IngestStatus } from '../ingest/background.js';
import type { QueryStore } from '../store/store.js';
import { AnswerCache, DEFAULT_ANSWER_CACHE_BYTES } from './answer-cache.js';
import type { PageRouteOptions } from './answers.js';
import { setBlockHeaders } from './block-headers.js';
import { bundlesEndpoint } from './bundles-route.js';
import { ApiError, grpcCodeOfHttpStatus, HttpRefusalError, InternalApiError, RouteNotFoundError } from './errors.js';
import { FastPath } from './fast-path.js';
import { healthRoute } from './health-route.js';
import { ingestStatusRoute } from './ingest-status-route.js';
import { ordersEndpoint } from './orders-route.js';
import type { ServedEndpoint } from './page-route.js';

export interface ServerOptions {
  store: QueryStore;
  /** Fastify's logger option: false (default), true, or pino options. */
  logger?: FastifyServerOptions['logger'];
  /** Log every request (two lines each); off by default: failures are logged either way. */
  logRequests?: boolean;
  /**
   * Bytes of answers kept until the next block (./answer-cache.ts); 0 keeps
   * none. Default DEFAULT_ANSWER_CACHE_BYTES.
   */
  answerCacheBytes?: number;
  /** Live ingestion's status, when the server ingests while it serves. */
  ingestStatus?: () => IngestStatus | Promise<IngestStatus>;
}

function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.httpStatus).type('application/json').send(JSON.stringify(error.toBody()));
}

/** Errors Fastify raises itself (bad URL, ...) carry a 4xx status and a message safe to show. */
function isClientError(error: unknown): error is FastifyError {
  if (!(error instanceof Error)) return false;
  const status = (error as Partial<FastifyError>).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof ApiError) return sendError(reply, error);
  if (isClientError(error)) {
    return sendError(reply, new HttpRefusalError(error.message, { grpc: grpcCodeOfHttpStatus(error.statusCode ?? 400) }));
  }
  request.log.error({ err: error }, 'request failed');
  return sendError(reply, new InternalApiError('internal error'));
}

/** The network's paged queries, served by Fastify and by the fast path alike. */
const PAGE_ENDPOINTS: readonly ServedEndpoint[] = [ordersEndpoint, bundlesEndpoint];

/**
 * The network's queries. Their errors name the last block stored too, as the
 * original's do; their pages name the block of the snapshot they were read in.
 */
async function queryRoutes(app: FastifyInstance, options: PageRouteOptions): Promise<void> {
  app.setErrorHandler(async (error, request, reply) => {
    setBlockHeaders(reply, await options.store.lastBlock().catch(() => undefined));
    return handleError(error, request, reply);
  });
  for (const page of PAGE_ENDPOINTS) await app.register(page.route, options);
}

/**
 * An HTTP server whose requests the fast path (./fast-path.ts) sees before
 * Fastify does, with the settings Fastify gives the servers it makes.
 */
function serverWithFastPath(fastPath: FastPath): NonNullable<FastifyServerOptions['serverFactory']> {
  return (handler, options) => {
    const server = createServer((req, res) => {
      fastPath.answer(req, res).then(
        (answered) => answered || handler(req, res),
        () => handler(req, res),
      );
    });
    // Fastify has resolved its defaults into these before it calls a factory.
    const settings = options as Pick<FastifyServerOptions, 'keepAliveTimeout' | 'requestTimeout' | 'connectionTimeout' | 'maxRequestsPerSocket'>;
    if (settings.keepAliveTimeout !== undefined) server.keepAliveTimeout = settings.keepAliveTimeout;
    if (settings.requestTimeout !== undefined) server.requestTimeout = settings.requestTimeout;
    if (settings.connectionTimeout !== undefined) server.setTimeout(settings.connectionTimeout);
    if (settings.maxRequestsPerSocket) server.maxRequestsPerSocket = settings.maxRequestsPerSocket;
    return server;
  };
}


/** A server ready to `listen()` or `inject()`; it does not listen itself. */
export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const cacheBytes = opts.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES;
  const cache = cacheBytes > 0 ? new AnswerCache(cacheBytes) : undefined;
  // Not when every request is to be logged: the fast path answers without Fastify's logging.
  const fastPath = cache !== undefined && opts.logRequests !== true
    ? new FastPath(cache, opts.store, new Map(PAGE_ENDPOINTS.map((page) => [page.path, page.reader(opts.store)])))
    : undefined;
  const app = Fastify({
    ...(fastPath && { serverFactory: serverWithFastPath(fastPath) }),
    logger: opts.logger ?? false,
    // Two log lines per request cost more than a cached answer; failures are logged either way.
    logController: new LogController({ disableRequestLogging: opts.logRequests !== true }),
    // Errors raised before routing (a malformed URL) get the same body as the rest.
    frameworkErrors: handleError,
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((_request, reply) => sendError(reply, new RouteNotFoundError('Not Found')));

  // Registered before the routes: it hooks each route as it is added.
  await app.register(compress, { encodings: ['gzip', 'br', 'deflate'] });
  await app.register(queryRoutes, { store: opts.store, cache });
  await app.register(healthRoute, { store: opts.store });
  await app.register(ingestStatusRoute, { status: opts.ingestStatus, store: opts.store });
  return app;
}
