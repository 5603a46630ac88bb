/** GET /api/v2/ingest/status: what live ingestion is doing (serve --source). */
import type { FastifyInstance } from 'fastify';
import type { IngestStatus } from '../ingest/background.js';
import type { QueryStore } from '../store/store.js';
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
  { status, store }: { status?: () => IngestStatus; store: QueryStore },
): Promise<void> {
  app.get(INGEST_STATUS_PATH, async (request, reply) => {
    if (!status) throw new ApiError(GrpcCode.Unavailable, 'no live ingestion: start serve with --source');
    // The last block comes from the store, so it agrees with what queries see right now;
    // counters and rates come from the worker's latest report.
    const last = await store.lastBlock();
    const s: IngestStatus = { ...status() };
    if (last) {
      s.lastBlock = { height: last.height, time: last.time };
      s.lagSeconds = Math.max(0, (Date.now() - Number(last.time / 1_000_000n)) / 1000);
    }
    return sendJson(reply, statusJson(s), wantsPretty(readQuery(request.url)));
  });
}
