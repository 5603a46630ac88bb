/**
 * GET /api/v2/ingest/status: the role this instance holds and what its
 * ingestion is doing. An instance without a source is a reader: it answers
 * its role and the last block it sees, so a load balancer or an operator can
 * ask every instance the same question.
 */
import type { FastifyInstance } from 'fastify';
import type { IngestRole, IngestStatus } from '../domain/ingest-status.js';
import type { RetentionStatus } from '../domain/retention.js';
import type { QueryStore } from '../store/store.js';
import { sendJson } from './connection.js';
import type { RouteDoc } from './openapi/route-doc.js';
import { ref } from './openapi/schemas.js';
import { PRETTY_PARAM } from './parameters.js';
import { wantsPretty } from './read-parameters.js';
import { readQuery } from './query.js';

export const INGEST_STATUS_PATH = '/api/v2/ingest/status';

interface StoredBlockStatus {
  lastBlock?: { height: bigint; time: bigint };
  lagSeconds?: number;
  retention?: RetentionStatus;
}

type StatusBody = (Omit<IngestStatus, 'readAt'> & { secondsSinceRead?: number } | { role: Extract<IngestRole, 'reader'> }) & StoredBlockStatus;

export const INGEST_STATUS_DOC: RouteDoc = {
  path: INGEST_STATUS_PATH, operationId: 'ingestStatus', tag: 'operations', summary: 'What ingestion is doing',
  description:
    'The role this instance holds (`writer`, `standby` waiting for the writer lock, or `reader` without a source), ' +
    'the last block stored and its lag, and what the store keeps (its retention, the oldest kept block, what pruning did, its size); ' +
    'with a source, its state, events/s, blocks stored and events skipped.',
  parameters: [PRETTY_PARAM], refusals: [],
  answer: { description: 'The status.', schema: ref('IngestStatus'), blockHeaders: false },
  read: (url) => wantsPretty(readQuery(url)),
};

/** int64 values as strings, as everywhere else in the API. */
function statusJson(s: StatusBody): string {
  return JSON.stringify(s, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

export async function ingestStatusRoute(
  app: FastifyInstance,
  { status, store }: { status?: () => IngestStatus | Promise<IngestStatus>; store: QueryStore },
): Promise<void> {
  app.get(INGEST_STATUS_PATH, async (request, reply) => {
    // The last block comes from the store, so it agrees with what queries see right now;
    // counters and rates come from the worker's latest report.
    const [last, retention] = await Promise.all([store.lastBlock(), store.retentionStatus?.()]);
    let s: StatusBody = { role: 'reader' };
    if (status) {
      const { readAt, ...rest } = await status();
      s = { ...rest, ...(readAt !== undefined && rest.state === 'running' && { secondsSinceRead: (Date.now() - readAt) / 1000 }) };
    }
    if (last) {
      s.lastBlock = { height: last.height, time: last.time };
      s.lagSeconds = Math.max(0, (Date.now() - Number(last.time / 1_000_000n)) / 1000);
    }
    if (retention !== undefined) s.retention = retention;
    return sendJson(reply, statusJson(s), wantsPretty(readQuery(request.url)));
  });
}
