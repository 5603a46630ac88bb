/** GET /metrics: the Prometheus text format, for a scraper. */
import type { FastifyInstance } from 'fastify';
import { register } from 'prom-client';
import type { RouteDoc } from '../openapi/route-doc.js';

export const METRICS_PATH = '/metrics';

/** The text format's media type, as prom-client's registries name it. */
export const METRICS_CONTENT_TYPE = register.contentType;

export const METRICS_DOC: RouteDoc = {
  path: METRICS_PATH, operationId: 'metrics', tag: 'operations', summary: 'Prometheus metrics',
  description:
    'The Prometheus text format: requests by route and status, their latency, the answer cache, the last block and the lag, ' +
    'ingestion, stream subscribers, the PostgreSQL pool (README, "Metrics"). Under `serve --workers N`, every HTTP process\'s ' +
    'summed (the last block: the newest) with the primary\'s ingestion. Not rate limited.',
  parameters: [], refusals: [], unlimited: true,
  answer: { description: 'The metrics.', contentType: METRICS_CONTENT_TYPE, schema: { type: 'string' }, blockHeaders: false },
};

export async function metricsRoute(app: FastifyInstance, { scrape }: { scrape: () => Promise<string> }): Promise<void> {
  app.get(METRICS_PATH, async (_request, reply) => reply.type(METRICS_CONTENT_TYPE).send(await scrape()));
}
