/**
 * Sending a page answer: from the answer cache when the store's last block is
 * the one it was read at, with its ETag, `304 Not Modified` for a client that
 * already holds it, and compressed bodies kept beside it.
 */
import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { blockToken, type BlockStamp } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import type { AnswerCache, CachedAnswer } from './answer-cache.js';
import { blockHeaderValues, BLOCK_HEIGHT_HEADER, BLOCK_TIMESTAMP_HEADER, setBlockHeaders } from './block-headers.js';
import { prettyJson } from './envelope.js';
import type { HitPath } from './hit-path.js';

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

const COMPRESS: Record<Coding, (body: Buffer) => Buffer> = {
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
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** The coding an answer goes out in, for a request's Accept-Encoding; undefined: identity. */
export function chooseCoding(answer: CachedAnswer, header: string | undefined): Coding | undefined {
  if (header === undefined || answer.identity.byteLength < COMPRESS_THRESHOLD) return undefined;
  // As the compression plugin reads it: `*` and x-gzip mean gzip.
  const value = header.toLowerCase().replace(/\*|x-gzip/g, 'gzip');
  return (negotiator.negotiate(value) as Coding | null) ?? undefined;
}

/**
 * The headers of an answer (but its coding and length), as the hit path
 * (./hit-path.ts) writes them; sendAnswer sets the same through Fastify.
 */
export function answerHeaders(answer: CachedAnswer): OutgoingHttpHeaders {
  const [height, micros] = blockHeaderValues(answer.lastBlock);
  return {
    [BLOCK_HEIGHT_HEADER]: height, [BLOCK_TIMESTAMP_HEADER]: micros,
    etag: answer.etag, vary: 'accept-encoding', 'content-type': JSON_TYPE,
  };
}

/** What a page route answers with: its store, and the answer cache and hit path if the server keeps answers. */
export interface PageRouteOptions {
  store: QueryStore;
  cache?: AnswerCache | undefined;
  /** Told which URL a kept answer answers, to serve it again before Fastify. */
  hitPath?: HitPath | undefined;
}

export interface AnswerOptions extends PageRouteOptions {
  request: FastifyRequest;
  reply: FastifyReply;
  /** The normalised query (./answer-key.ts); equal keys must mean equal answers. */
  key: string;
  pretty: boolean;
  read: () => Promise<FreshAnswer>;
}

/** Sends the answer to a page request, computing it only if the cache cannot serve it. */
export async function sendAnswer(o: AnswerOptions): Promise<FastifyReply> {
  const { request, reply, cache, key } = o;
  // A store that cannot say its last block may still answer the page (or fail it, and say why).
  const block = cache === undefined
    ? undefined
    : o.hitPath?.blockReadFor(request.raw) ?? await o.store.lastBlock().then(blockToken, () => undefined);
  let answer = block === undefined ? undefined : cache!.get(key, block);
  if (answer === undefined) {
    const fresh = await o.read();
    const body = o.pretty ? prettyJson(fresh.json) : fresh.json;
    answer = {
      block: blockToken(fresh.lastBlock), lastBlock: fresh.lastBlock, identity: Buffer.from(body), etag: etagOf(body),
      encoded: new Map(),
    };
    if (block !== undefined) cache?.set(key, answer);
  }
  if (block !== undefined) o.hitPath?.remember(request.url, key);
  setBlockHeaders(reply, answer.lastBlock);
  reply.header('etag', answer.etag).header('vary', 'accept-encoding');
  if (matchesEtag(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  const coding = chooseCoding(answer, request.headers['accept-encoding']);
  if (coding === undefined) return reply.type(JSON_TYPE).send(answer.identity);
  let encoded = answer.encoded.get(coding);
  if (encoded === undefined) {
    encoded = COMPRESS[coding](answer.identity);
    cache?.addEncoding(key, answer, coding, encoded);
  }
  // The compression plugin leaves a body that already names its coding alone.
  return reply.type(JSON_TYPE).header('content-encoding', coding).send(encoded);
}
