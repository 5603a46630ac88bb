/**
 * GET /health: the service answers, its store can be read and its
 * ingestion (if it has a source) has neither failed nor stalled; 503 with
 * the reason otherwise. GET /ready: healthy, and the last block stored is recent
 * enough to serve a live network (a load balancer's readiness check).
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { asLedgerError } from '../errors.js';
import type { IngestStatus } from '../domain/ingest-status.js';
import type { CommittedBlock, QueryStore } from '../store/store.js';
import { JSON_TYPE } from './answer-headers.js';
import { ANSWER_EXAMPLES } from './openapi/examples.js';
import type { RouteDoc } from './openapi/route-doc.js';
import { ref } from './openapi/schemas.js';

export const HEALTH_PATH = '/health';
export const READY_PATH = '/ready';

export interface HealthOptions {
  store: QueryStore;
  /** How ingestion goes, when this instance (or its primary process) ingests; it may reject if nobody can say. */
  ingestStatus?: (() => IngestStatus | Promise<IngestStatus>) | undefined;
  /**
   * /ready fails while the last block is older than this many seconds, and
   * /health while a running source has read nothing for as long; 0: never.
   */
  readyMaxLagSeconds: number;
  /** Milliseconds now; tests set it. */
  clock?: () => number;
}

interface Verdict {
  block: CommittedBlock | undefined;
  /** Why this instance is not healthy; undefined when it is. */
  problem?: string;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function examine({ store, ingestStatus, readyMaxLagSeconds, clock = Date.now }: HealthOptions, log: FastifyBaseLogger): Promise<Verdict> {
  let block: CommittedBlock | undefined;
  try {
    block = await store.lastBlock();
  } catch (e) {
    // The kind only: the store's message names its server, which is for the log.
    log.error({ err: e }, 'health: the store cannot be read');
    return { block: undefined, problem: `the store cannot be read (${asLedgerError(e).code}; the log says more)` };
  }
  if (ingestStatus === undefined) return { block };
  let status: IngestStatus;
  try {
    status = await ingestStatus();
  } catch (e) {
    return { block, problem: `ingestion's status is unknown: ${messageOf(e)}` };
  }
  if (status.state === 'failed') return { block, problem: `ingestion failed: ${status.error ?? 'no reason given'}` };
  // A writer's source that runs (a socket, a file followed) and has read nothing for long: the core stopped, or its file did.
  const still = status.state === 'running' && status.role === 'writer' && status.readAt !== undefined ? (clock() - status.readAt) / 1000 : 0;
  if (readyMaxLagSeconds > 0 && still > readyMaxLagSeconds) {
    return { block, problem: `ingestion stalled: nothing read from ${status.source} for ${Math.floor(still)} s, more than the ${readyMaxLagSeconds} s allowed (--ready-max-lag)` };
  }
  return { block };
}

const blockJson = (block: CommittedBlock | undefined) => block === undefined
  ? null
  : { height: String(block.height), time: String(block.time), chainId: block.chainId };

function send(reply: FastifyReply, status: number, body: object): FastifyReply {
  return reply.code(status).type(JSON_TYPE).send(JSON.stringify(body));
}

/** Seconds since the block's time (Unix ns). */
const ageSeconds = (block: CommittedBlock) => Math.max(0, (Date.now() - Number(block.time / 1_000_000n)) / 1000);

export const HEALTH_DOC: RouteDoc = {
  path: HEALTH_PATH, operationId: 'health', tag: 'operations', summary: 'Can this instance serve?',
  description: 'Its store can be read, and its ingestion (if it has a source) has not failed, nor read nothing for more than ' +
    '--ready-max-lag seconds (60; 0: never) while its source runs. Not rate limited.',
  parameters: [], refusals: [], unlimited: true,
  answer: { description: 'It can.', schema: ref('Health'), example: ANSWER_EXAMPLES.health?.body, blockHeaders: false },
  otherAnswers: { 503: { description: 'It cannot: `reason` says why.', schema: ref('Health'), blockHeaders: false } },
};

export const READY_DOC: RouteDoc = {
  path: READY_PATH, operationId: 'ready', tag: 'operations', summary: 'Should a load balancer send it queries?',
  description: 'Healthy, and the last block stored is no older than --ready-max-lag seconds (60; 0: never for lag). Not rate limited.',
  parameters: [], refusals: [], unlimited: true,
  answer: { description: 'Ready.', schema: ref('Ready'), blockHeaders: false },
  otherAnswers: { 503: { description: '`lagging` or `unavailable`: `reason` says why.', schema: ref('Ready'), blockHeaders: false } },
};

export async function healthRoute(app: FastifyInstance, options: HealthOptions): Promise<void> {
  app.get(HEALTH_PATH, async (request, reply) => {
    const { block, problem } = await examine(options, request.log);
    // The body of a healthy instance is as it always was: status and last block.
    if (problem === undefined) return send(reply, 200, { status: 'ok', lastBlock: blockJson(block) });
    return send(reply, 503, { status: 'unavailable', reason: problem, lastBlock: blockJson(block) });
  });

  app.get(READY_PATH, async (request, reply) => {
    const { block, problem } = await examine(options, request.log);
    const lastBlock = blockJson(block);
    if (problem !== undefined) return send(reply, 503, { status: 'unavailable', reason: problem, lastBlock });
    const maxLag = options.readyMaxLagSeconds;
    const lagSeconds = block === undefined ? undefined : ageSeconds(block);
    if (maxLag > 0 && lagSeconds === undefined) {
      return send(reply, 503, { status: 'lagging', reason: 'no block stored yet', lastBlock });
    }
    if (maxLag > 0 && lagSeconds! > maxLag) {
      const reason = `the last block is ${lagSeconds!.toFixed(1)} s old, more than the ${maxLag} s allowed (--ready-max-lag)`;
      return send(reply, 503, { status: 'lagging', reason, lastBlock, lagSeconds });
    }
    return send(reply, 200, { status: 'ready', lastBlock, ...(lagSeconds !== undefined && { lagSeconds }) });
  });
}
