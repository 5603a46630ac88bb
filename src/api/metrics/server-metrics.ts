/**
 * An HTTP process's metrics, in a prom-client registry: requests by route
 * and status and their latency (counted when the answer is sent, whichever
 * path answered it: the front door, the fast path or Fastify), the answer
 * cache's hits and misses, the last block stored and how far behind now it
 * is, stream subscribers and the PostgreSQL pool. Everything that has a
 * counter elsewhere (the cache, the store, the pool) is read when scraped,
 * not counted again per request. A request is counted in plain integers
 * (its route's counts by status, its latency's bucket), turned into
 * prom-client's form only when scraped: prom-client's labelled counter and
 * histogram cost a few us a request, most of a cached answer's own work
 * (BENCHMARKS.md, "The fast path won back (issue 30)").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricType, type MetricValueWithName } from 'prom-client';
import type { QueryStore } from '../../store/store.js';
import type { AnswerCache } from '../answer-cache.js';
import { streamSubscribers } from './stream-subscribers.js';

/** Every metric's name starts so. */
export const METRIC_PREFIX = 'ledger_query_';

/** How often each process samples its event loop's delay (nodejs_eventloop_lag_*), ms. */
const EVENT_LOOP_SAMPLE_MS = 100;

/** A request that matched no route (a 404), and one answered before any route was chosen for a path with parameters. */
export const UNMATCHED_ROUTE = '(unmatched)';

const ROUTE = Symbol('the route that answered');

/** Names the route (its template, `/docs/static/*`) that answers `req`, for its metrics. */
export function labelRoute(req: IncomingMessage, route: string | undefined): void {
  (req as IncomingMessage & { [ROUTE]?: string })[ROUTE] = route ?? UNMATCHED_ROUTE;
}

/** The connections of a PostgreSQL store's pool (pg's Pool counts). */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}

export interface MetricsSources {
  /** Read for the last block when scraped. */
  store: QueryStore;
  cache: AnswerCache | undefined;
  /** The store's pool, if it has one. */
  pool?: (() => PoolCounts) | undefined;
}

/**
 * Latency buckets, in seconds: cached pages take ~0.1-0.5 ms, computed ones
 * 1-50 ms, the slowest queries up to the query timeout (10 s).
 */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One route's requests: how many answered with each status, and their
 * latency's buckets (LATENCY_BUCKETS, then +Inf), sum and count. The fast
 * path keeps its route's tally with each URL it remembers, so that counting
 * a cached answer looks nothing up.
 */
export class RouteTally {
  /** Answers 200, the usual status, kept apart: counting one touches no map. */
  private ok = 0;
  private readonly others = new Map<number, number>();
  readonly buckets: number[] = LATENCY_BUCKETS.map(() => 0);
  sum = 0;
  count = 0;

  /** Counts an answer with `status` to a request that arrived at `started` (performance.now()). */
  add(status: number, started: number): void {
    if (status === 200) this.ok++;
    else this.others.set(status, (this.others.get(status) ?? 0) + 1);
    const seconds = (performance.now() - started) / 1000;
    this.sum += seconds;
    this.count++;
    // Past the last bound, only +Inf (the count) holds it.
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        this.buckets[i]!++;
        break;
      }
    }
  }

  /** Answers by status. */
  statuses(): [number, number][] {
    return this.ok > 0 ? [[200, this.ok], ...this.others] : [...this.others];
  }
}

/** A histogram's type as prom-client's metrics name it at run time (its typings declare an enum). */
const HISTOGRAM = 'histogram' as unknown as MetricType;

/**
 * The latency histogram, read from the plain counts when scraped: a
 * Histogram of prom-client's to its registry and the cluster's aggregation,
 * whose values are not observed one by one.
 */
class LatencyHistogram extends Histogram<'route'> {
  constructor(
    private readonly metricName: string, private readonly metricHelp: string, registers: Registry[],
    private readonly counts: ReadonlyMap<string, RouteTally>,
  ) {
    super({ name: metricName, help: metricHelp, labelNames: ['route'], buckets: LATENCY_BUCKETS, registers });
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<'route' | 'le'>>> {
    const values: MetricValueWithName<'route' | 'le'>[] = [];
    const bucket = `${this.metricName}_bucket`;
    for (const [route, c] of this.counts) {
      let below = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        below += c.buckets[i]!;
        values.push({ labels: { le, route }, value: below, metricName: bucket });
      });
      values.push(
        { labels: { le: '+Inf', route }, value: c.count, metricName: bucket },
        { labels: { route }, value: c.sum, metricName: `${this.metricName}_sum` },
        { labels: { route }, value: c.count, metricName: `${this.metricName}_count` },
      );
    }
    // No `collect`, though the typings ask for one: as prom-client's own get(), whose result crosses to the primary (a function cannot).
    const metric = { name: this.metricName, help: this.metricHelp, type: HISTOGRAM, aggregator: 'sum' as const, values };
    return metric as MetricObjectWithValues<MetricValueWithName<'route' | 'le'>>;
  }

  /** What the registry's text format reads where a metric has it, in place of get(). */
  getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<'route' | 'le'>>> {
    return this.get();
  }
}

export class ServerMetrics {
  /** Requests by route, counted as they are answered. */
  private readonly counts = new Map<string, RouteTally>();
  /** Paths served without parameters in them: a request answered before Fastify is labelled by its path if it is one. */
  private readonly exactRoutes = new Set<string>();
  /** Routes served under a prefix (`/api/v2/order/*`), longest first: such a request answered before Fastify is labelled by the longest it starts with. */
  private prefixRoutes: string[] = [];

  constructor(readonly registry: Registry, sources: MetricsSources, options: { processMetrics?: boolean } = {}) {
    const registers = [registry];
    const name = (n: string) => METRIC_PREFIX + n;
    const counts = this.counts;
    new Counter({
      name: name('http_requests_total'), help: 'HTTP requests answered, by route (its template) and status.',
      labelNames: ['route', 'status'], registers,
      collect() {
        this.reset();
        for (const [route, c] of counts) for (const [status, n] of c.statuses()) this.inc({ route, status }, n);
      },
    });
    new LatencyHistogram(name('http_request_duration_seconds'), 'Time from a request\'s arrival to its answer sent, by route.', registers, counts);
    const { cache, store, pool } = sources;
    new Counter({
      name: name('answer_cache_hits_total'), help: 'Page requests answered from the answer cache.', registers,
      collect() {
        this.reset();
        this.inc(cache?.stats.hits ?? 0);
      },
    });
    new Counter({
      name: name('answer_cache_misses_total'), help: 'Page requests whose answer was read from the store (and kept).', registers,
      collect() {
        this.reset();
        this.inc(cache?.stats.misses ?? 0);
      },
    });
    new Gauge({
      name: name('answer_cache_bytes'), help: 'Bytes of answers kept.', registers,
      collect() {
        this.set(cache?.size.bytes ?? 0);
      },
    });
    // Before the last block's gauges: a scrape reads the pool as it was, before its own read of the last block.
    if (pool !== undefined) {
      const poolGauge = (n: string, help: string, value: (c: PoolCounts) => number) => new Gauge({
        name: name(n), help, registers,
        collect() {
          this.set(value(pool()));
        },
      });
      poolGauge('pg_pool_connections', 'PostgreSQL connections the pool holds open.', (c) => c.total);
      poolGauge('pg_pool_in_use', 'PostgreSQL connections running a query.', (c) => c.total - c.idle);
      poolGauge('pg_pool_idle', 'PostgreSQL connections open and idle.', (c) => c.idle);
      poolGauge('pg_pool_waiting', 'Queries waiting for a PostgreSQL connection.', (c) => c.waiting);
    }
    // Every HTTP process reads the same store: the newest of what they say, not their sum.
    let lastBlock: Promise<{ height: number; seconds: number } | undefined> | undefined;
    const readLastBlock = () => {
      // One read per scrape for the three gauges.
      lastBlock ??= store.lastBlock().then(
        (b) => b && { height: Number(b.height), seconds: Number(b.time / 1000n) / 1e6 },
        () => undefined,
      ).finally(() => setImmediate(() => (lastBlock = undefined)));
      return lastBlock;
    };
    new Gauge({
      name: name('last_block_height'), help: 'Height of the last block stored (0 before any).', aggregator: 'max', registers,
      async collect() {
        this.set((await readLastBlock())?.height ?? 0);
      },
    });
    new Gauge({
      name: name('last_block_timestamp_seconds'), help: 'Time of the last block stored, Unix seconds (0 before any).', aggregator: 'max', registers,
      async collect() {
        this.set((await readLastBlock())?.seconds ?? 0);
      },
    });
    new Gauge({
      name: name('ingest_lag_seconds'), help: 'Seconds between the last block\'s time and now (as /ready reads it).', aggregator: 'min', registers,
      async collect() {
        const block = await readLastBlock();
        if (block === undefined) this.reset();
        else this.set(Math.max(0, Date.now() / 1000 - block.seconds));
      },
    });
    new Gauge({
      name: name('stream_subscribers'), help: 'Order streams open (GET /api/v2/stream/orders).', registers,
      collect() {
        this.set(streamSubscribers.count);
      },
    });
    // The event loop's delay is sampled by a timer: prom-client's 10 ms woke every idle process 100 times a second.
    if (options.processMetrics === true) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /**
   * A route served (its template): one without parameters, or with only a
   * trailing `*` (a prefix), labels requests answered before Fastify too
   * (by the fast path, the stream, the front door).
   */
  addRoute(template: string): void {
    if (!/[:*]/.test(template)) this.exactRoutes.add(template);
    else if (/^[^:*]*\*$/.test(template)) {
      this.prefixRoutes = [...new Set([...this.prefixRoutes, template])].sort((a, b) => b.length - a.length);
    }
  }

  /** The route (its template) that answers `req`, as labelled, or looked up by its path. */
  routeOf(req: IncomingMessage): string {
    const route = (req as IncomingMessage & { [ROUTE]?: string })[ROUTE];
    if (route !== undefined) return route;
    const url = req.url ?? '';
    const end = url.indexOf('?');
    const path = end < 0 ? url : url.slice(0, end);
    return this.exactRoutes.has(path) ? path : this.prefixRoutes.find((p) => path.startsWith(p.slice(0, -1))) ?? UNMATCHED_ROUTE;
  }

  /** The tally of `route`'s answers. */
  tally(route: string): RouteTally {
    let c = this.counts.get(route);
    if (c === undefined) {
      c = new RouteTally();
      this.counts.set(route, c);
    }
    return c;
  }

  /** Counts an answer of `route` with `status`, `started` (performance.now()) when its request arrived. */
  answered(route: string, status: number, started: number): void {
    this.tally(route).add(status, started);
  }

  /** Counts the answer to `req` once it is sent ('close', not 'finish': a stream's client leaves it, and its answer never finishes). */
  countWhenSent(req: IncomingMessage, res: ServerResponse, started: number): void {
    res.once('close', () => this.answered(this.routeOf(req), res.statusCode, started));
  }
}
