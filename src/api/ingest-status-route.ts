/** GET /api/v2/ingest/status: what live ingestion is doing (serve --source). */
import type { FastifyInstance } from 'fastify';
import type { IngestStatus } from '../ingest/background.js';
import { sendJson } from './envelope.js';
import { ApiError, GrpcCode } from './errors.js';
import { wantsPretty } from './params.js';
import { readQuery } from './query.js';

export const INGEST_STATUS_PATH = '/api/v2/ingest/status';

/** int64 values as strings, as everywhere else in the API. */
function statusJson(s: IngestStatus): string {
  return JSON.stringify(s, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

export async function ingestStatusRoute(
  app: FastifyInstance,
  { status }: { status?: () => IngestStatus },
): Promise<void> {
  app.get(INGEST_STATUS_PATH, async (request, reply) => {
    if (!status) throw new ApiError(GrpcCode.Unavailable, 'no live ingestion: start serve with --source');
    return sendJson(reply, statusJson(status()), wantsPretty(readQuery(request.url)));
  });
}
