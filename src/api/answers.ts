/**
 * Sending a page answer: from the answer cache when the store's last block is
 * the one it was read at, with its ETag, `304 Not Modified` for a client that
 * already holds it, and compressed bodies kept beside it.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BlockStamp } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import { AnswerCache, blockToken } from './answer-cache.js';
import { setBlockHeaders } from './block-headers.js';
import { prettyJson } from './envelope.js';

/** What a route computes on a miss: the answer's JSON and the block it was read at. */
export interface FreshAnswer {
  json: string;
  lastBlock: BlockStamp | undefined;
}

/** The codings offered, most preferred first, as the compression plugin offers them (./server.ts). */
export const CODINGS = ['gzip', 'br', 'deflate'] as const;
type Coding = (typeof CODINGS)[number];
const negotiator = new Negotiator({ supportedValues: [...CODINGS] });

/** Bodies shorter than this go uncompressed, as the compression plugin leaves them. */
const COMPRESS_THRESHOLD = 1024;

const COMPRESS: Record<Coding, (body: string) => Buffer> = {
  gzip: (b) => gzipSync(b),
  // Quality 4: most of brotli's gain at a fraction of its default (11) cost.
  br: (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }),
  deflate: (b) => deflateSync(b),
};

const JSON_TYPE = 'application/json; charset=utf-8';

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** Does If-None-Match name this tag (or `*`)? Weak tags compare equal to strong ones for GET (RFC 9110). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

function codingOf(request: FastifyRequest): Coding | undefined {
  const header = request.headers['accept-encoding'];
  if (header === undefined) return undefined;
  // As the compression plugin reads it: `*` and x-gzip mean gzip.
  const value = header.toLowerCase().replace(/\*|x-gzip/g, 'gzip');
  return (negotiator.negotiate(value) as Coding | null) ?? undefined;
}

export interface AnswerOptions {
  request: FastifyRequest;
  reply: FastifyReply;
  store: QueryStore;
  cache: AnswerCache | undefined;
  /** The normalised query (./answer-key.ts); equal keys must mean equal answers. */
  key: string;
  pretty: boolean;
  read: () => Promise<FreshAnswer>;
}

/** Sends the answer to a page request, computing it only if the cache cannot serve it. */
export async function sendAnswer(o: AnswerOptions): Promise<FastifyReply> {
  const { request, reply, cache, key } = o;
  // A store that cannot say its last block may still answer the page (or fail it, and say why).
  const block = cache === undefined ? undefined : await o.store.lastBlock().then(blockToken, () => undefined);
  let answer = block === undefined ? undefined : cache!.get(key, block);
  if (answer === undefined) {
    const fresh = await o.read();
    const body = o.pretty ? prettyJson(fresh.json) : fresh.json;
    answer = { block: blockToken(fresh.lastBlock), lastBlock: fresh.lastBlock, body, etag: etagOf(body), encoded: new Map() };
    if (block !== undefined) cache?.set(key, answer);
  }
  setBlockHeaders(reply, answer.lastBlock);
  reply.header('etag', answer.etag).header('vary', 'accept-encoding');
  if (matches(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  const coding = answer.body.length >= COMPRESS_THRESHOLD ? codingOf(request) : undefined;
  if (coding === undefined) return reply.type('application/json').send(answer.body);
  let encoded = answer.encoded.get(coding);
  if (encoded === undefined) {
    encoded = COMPRESS[coding](answer.body);
    cache?.addEncoding(key, answer, coding, encoded);
  }
  // The compression plugin leaves a body that already names its coding alone.
  return reply.type(JSON_TYPE).header('content-encoding', coding).send(encoded);
}
