/** The HTTP API: routes, the original's error body, compression, and what every request meets first. */
import compress from '@fastify/compress';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { Registry } from 'prom-client';
import { LedgerError, QueryTimeoutError } from '../errors.js';
import type { IngestStatus } from '../domain/ingest-status.js';
import type { QueryStore } from '../store/store.js';
import { AnswerCache } from './answer-cache.js';
import type { PageRouteOptions } from './answers.js';
import { blockHeaderList, setHeaders } from './answer-headers.js';
import { bundlesRoute, removedBundlesRoute } from './bundles-route.js';
import { mergeVary } from './cors.js';
import {
  ApiError,
  DeadlineExceededError,
  grpcCodeOfHttpStatus,
  HttpRefusalError,
  InternalApiError,
  RouteNotFoundError,
  UnavailableError,
} from './errors.js';
import { docsRoutes } from './docs-route.js';
import { FastPath } from './fast-path.js';
import { FrontDoor } from './front-door.js';
import { HEALTH_PATH, healthRoute, READY_PATH } from './health-route.js';
import { DEFAULT_ANSWER_CACHE_BYTES, httpOptions, type HttpOptions } from './http-options.js';
import { ALLOWED_METHODS, createHttpServer, methodRefusal } from './http-server.js';
import { ingestStatusRoute } from './ingest-status-route.js';
import { KnownBlock } from './known-block.js';
import { METRICS_PATH, metricsRoute } from './metrics/metrics-route.js';
import { registerRetentionMetrics } from './metrics/retention-metrics.js';
import { labelRoute, ServerMetrics } from './metrics/server-metrics.js';
import { orderRoute, versionsRoute } from './order-route.js';
import { ordersRoute } from './orders-route.js';
import type { PageRoute } from './page-route.js';
import { RateLimiter } from './rate-limit.js';
import { sendRefusal } from './refusal.js';
import { requestIds } from './request-id.js';
import { attachOrderStreams, type StreamServer } from './stream/attach.js';
import { STREAM_ORDERS_PATH } from './stream/request.js';

export interface AppOptions {
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
  /** Live ingestion's status, when the server ingests while it serves; it may reject when nobody can say. */
  ingestStatus?: () => IngestStatus | Promise<IngestStatus>;
  /** Limits, timeouts, CORS, rate limit: ./http-options.ts's defaults for what is not given. */
  http?: Partial<HttpOptions>;
  /** How long answers under way have to be sent once the server closes (./http-server.ts); CLOSE_GRACE_MS if absent. */
  closeGraceMs?: number;
  /** Bytes of URLs the fast path remembers (./fast-path.ts); its default if absent. */
  urlMapBytes?: number;
  /** GET /metrics (./metrics/): what this server counts goes in `registry` (a new one if absent). */
  metrics?: {
    registry?: Registry;
    /** What GET /metrics answers: `registry`'s text if absent (under serve --workers, every process's, through the primary). */
    scrape?: () => Promise<string>;
    /** Node's process metrics too (memory, CPU, event loop): for a served process, not for a test's many servers. */
    processMetrics?: boolean;
  };
}

/** Errors Fastify raises itself (bad URL, ...) carry a 4xx status and a message safe to show. */
function isClientError(error: unknown): error is FastifyError {
  if (!(error instanceof Error)) return false;
  const status = (error as Partial<FastifyError>).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** What the client is told of a failure: refusals as they are; the store's faults by what to do about them, their details logged. */
function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof ApiError) return sendRefusal(reply, error);
  if (isClientError(error)) {
    const status = error.statusCode ?? 400;
    return sendRefusal(reply, new HttpRefusalError(error.message, { grpc: grpcCodeOfHttpStatus(status), status }));
  }
  request.log.error({ err: error }, 'request failed');
  if (error instanceof QueryTimeoutError) return sendRefusal(reply, new DeadlineExceededError('the query took longer than this server allows'));
  // A store that may come back (its server unreachable, say): worth trying again.
  if (error instanceof LedgerError && error.retryable) return sendRefusal(reply, new UnavailableError('the store cannot answer now: try again'));
  return sendRefusal(reply, new InternalApiError('internal error'));
}

/** The methods a path that is served answers (./http-server.ts ALLOWED_METHODS). */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The page routes: the network's paged queries, served by Fastify and by the fast path alike. */
const PAGE_ROUTES: readonly PageRoute[] = [ordersRoute, bundlesRoute, removedBundlesRoute, orderRoute, versionsRoute];

/**
 * The network's queries. Their errors name the last block stored too, as the
 * original's do; their pages name the block of the snapshot they were read in.
 */
async function queryRoutes(app: FastifyInstance, options: PageRouteOptions): Promise<void> {
  for (const page of PAGE_ROUTES) await app.register(page.route, options);
}

/** The app: Fastify with every route over one store, ready to `listen()` or `inject()`; it does not listen itself. */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const http = httpOptions(opts.http);
  const known = new KnownBlock();
  const store = known.watch(opts.store);
  const limits = { maxListValues: http.maxListValues };
  const cacheBytes = opts.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES;
  const cache = cacheBytes > 0 ? new AnswerCache(cacheBytes) : undefined;
  const registry = opts.metrics?.registry ?? new Registry();
  const metrics = new ServerMetrics(registry, {
    store: opts.store, cache, pool: opts.store.connections && (() => opts.store.connections!()),
  }, { processMetrics: opts.metrics?.processMetrics === true });
  registerRetentionMetrics(registry, opts.store);
  const front = new FrontDoor({
    cors: { origins: http.corsOrigins, maxAgeSeconds: http.corsMaxAgeSeconds },
    rateLimiter: http.rateLimit && new RateLimiter(http.rateLimit, http.trustedProxies),
    known,
    // The load balancer's checks and the scraper's.
    unlimited: new Set([HEALTH_PATH, READY_PATH, METRICS_PATH]),
  });
  // Not when every request is to be logged: the fast path answers without Fastify's logging.
  const fastPath = cache !== undefined && opts.logRequests !== true
    ? new FastPath({
      cache, store, urlMapBytes: opts.urlMapBytes, sharedDoor: front.shared, tally: (route) => metrics.tally(route),
      endpoints: PAGE_ROUTES.map((e) => ({ path: e.path, prefix: e.prefix, route: e.prefix ? `${e.path}*` : e.path, reader: e.reader(store, limits) })),
    })
    : undefined;
  let warn = (_message: string) => {};
  let streams: StreamServer | undefined;
  const app = Fastify({
    // Every request meets the front door, then the fast path (if any), then the stream, then Fastify.
    serverFactory: (handler) => createHttpServer(http, (req, res) => {
      const started = performance.now();
      const door = front.admit(req, res);
      if (door === undefined) return metrics.answered(metrics.routeOf(req), res.statusCode, started);
      // A kept answer is written and counted at once; anything else goes on when it is known not to be one.
      const fast = fastPath?.answer(req, res, door, started) ?? false;
      if (fast === true) return;
      const onward = () => {
        front.setOn(req, res, door);
        metrics.countWhenSent(req, res, started);
        if (streams?.streamOverHttp(req, res) !== true) void handler(req, res);
      };
      if (fast === false) onward();
      else fast.then((answered) => answered || onward(), onward);
    }, { known, refusalHeaders: (req) => front.refusalHeaders(req), warn: (message) => warn(message), closeGraceMs: opts.closeGraceMs }),
    logger: opts.logger ?? false,
    genReqId: requestIds(),
    // Two log lines per request cost more than a cached answer; failures are logged either way.
    logController: new LogController({ disableRequestLogging: opts.logRequests !== true }),
    // Errors raised before routing (a malformed URL) get the same body as the rest, and the block known.
    frameworkErrors: (error, request, reply) => {
      setHeaders(reply.raw, known.headers());
      return handleError(error, request, reply);
    },
    // The front door says so in the envelope instead.
    return503OnClosing: false,
  });
  warn = (message) => app.log.warn(message);
  streams = attachOrderStreams(app.server, store, {
    perClient: http.streamsPerClient, refusalHeaders: (req) => front.refusalHeaders(req), admit: (req, socket) => front.admitUpgrade(req, socket),
  });
  // Requests that reach Fastify without the server's listener (inject()) meet the front door here.
  app.addHook('onRequest', async (request, reply) => {
    labelRoute(request.raw, request.routeOptions.url);
    if (front.admitOnce(request.raw, reply.raw)) return;
    reply.hijack();
    return reply;
  });
  // The block known before the first request, so that even a refusal of the first one names it.
  app.addHook('onReady', async () => {
    await store.lastBlock().catch(() => undefined);
  });
  app.addHook('preClose', async () => {
    front.closing = true;
    // Streams never end on their own: the server would wait for them.
    streams?.close();
  });
  // Every refusal names the last block stored, as the original's do; the store read now, or the last one known.
  const withBlock = async (reply: FastifyReply) => {
    setHeaders(reply.raw, blockHeaderList(await store.lastBlock().catch(() => known.latest())));
  };
  app.setErrorHandler(async (error, request, reply) => {
    await withBlock(reply);
    return handleError(error, request, reply);
  });
  app.setNotFoundHandler(async (request, reply) => {
    await withBlock(reply);
    // Every path here is read-only: a method that would write is refused as Node's parser refusals are (./http-server.ts).
    if (!READ_METHODS.has(request.method)) {
      reply.header('Allow', ALLOWED_METHODS);
      return sendRefusal(reply, methodRefusal(`${request.method}: this server only reads`));
    }
    return sendRefusal(reply, new RouteNotFoundError('Not Found'));
  });

  app.addHook('onRoute', (route) => metrics.addRoute(route.url));
  // Served outside Fastify (./stream/attach.ts): no route of its own tells the metrics its label.
  metrics.addRoute(STREAM_ORDERS_PATH);
  // Registered before the routes: it hooks each route as it is added.
  await app.register(compress, { encodings: ['gzip', 'br', 'deflate'] });
  if (http.corsOrigins !== '*' && http.corsOrigins.length > 0) {
    // The front door's `Vary: Origin` kept beside what the routes and compression say.
    app.addHook('onSend', async (_request, reply, payload) => {
      const early = reply.raw.getHeader('vary');
      const late = reply.getHeader('vary');
      if (early !== undefined && late !== undefined) reply.header('vary', mergeVary(early, late));
      return payload;
    });
  }
  await app.register(queryRoutes, { store, cache, limits });
  await app.register(healthRoute, { store, ingestStatus: opts.ingestStatus, readyMaxLagSeconds: http.readyMaxLagSeconds });
  await app.register(ingestStatusRoute, { status: opts.ingestStatus, store });
  await app.register(metricsRoute, { scrape: opts.metrics?.scrape ?? (() => registry.metrics()) });
  await app.register(docsRoutes);
  return app;
}
