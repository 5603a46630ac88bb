/**
 * Sending a page answer: from the answer cache when the store's last block is
 * the one it was read at, with its ETag, `304 Not Modified` for a client that
 * already holds it, and compressed bodies kept beside it.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { blockToken, type BlockStamp } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import type { AnswerCache, CachedAnswer } from './answer-cache.js';
import { blockHeaderList, COMMON_HEADERS, JSON_TYPE, merged, setHeaders, valuesOf, type HeaderList } from './answer-headers.js';
import { mergeVary } from './cors.js';
import { prettyBody } from './connection.js';
import type { ReadLimits } from './http-options.js';
import { IGNORED_PARAMETERS_HEADER } from './query.js';

/** What a route computes on a miss: the answer's body (JSON, UTF-8) and the block it was read at. */
export interface FreshAnswer {
  body: Buffer;
  lastBlock: BlockStamp | undefined;
}

/** The codings offered, most preferred first, as the compression plugin offers them (./app.ts). */
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

function etagOf(body: Buffer): string {
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

/** The answer's own headers, before its type and length: the block it names, its tag, Vary. */
function ownHeaders(answer: CachedAnswer, vary: string, ignored: string | undefined): string[] {
  const head = [...blockHeaderList(answer.lastBlock), 'etag', answer.etag, 'vary', vary];
  if (ignored !== undefined) head.push(IGNORED_PARAMETERS_HEADER, ignored);
  return head;
}

/** What an answer's head is kept under, per delivery: '304', the coding, or '' (identity). */
const deliveryName = (delivery: Delivery) => (delivery.notModified ? '304' : delivery.coding ?? '');

/**
 * The whole head of `delivery` of `answer`, as the fast path (./fast-path.ts)
 * writes it: the common headers, the door's (`door`, ./front-door.ts), the
 * answer's own, its type, coding and length (none of them on a 304, as
 * Fastify sends one); one Vary, the door's (Origin, when it says one) and
 * Accept-Encoding. Kept with the answer when
 * the door's headers are every request's (`shared`) and no parameter was
 * ignored: a cached answer is then sent with no header built.
 */
export function answerHead(
  answer: CachedAnswer, delivery: Delivery, door: HeaderList, shared: HeaderList, ignored: string | undefined,
): HeaderList {
  const keep = door === shared && ignored === undefined;
  const name = deliveryName(delivery);
  if (keep) {
    const kept = answer.heads.get(name);
    if (kept !== undefined) return kept;
  }
  const head = merged([...COMMON_HEADERS, ...door], ownHeaders(answer, mergeVary(valuesOf(door, 'vary'), 'accept-encoding'), ignored));
  if (!delivery.notModified) {
    head.push('content-type', JSON_TYPE);
    if (delivery.coding !== undefined) head.push('content-encoding', delivery.coding);
    head.push('content-length', String(delivery.body.byteLength));
  }
  if (keep) answer.heads.set(name, head);
  return head;
}

/** What a page route answers from: its store, the answer cache if the server keeps answers, and the limits of a request. */
export interface PageRouteOptions {
  store: QueryStore;
  cache?: AnswerCache | undefined;
  limits: ReadLimits;
}

const FAST_PATH_FAILURE = Symbol('what the fast path met');

/** Hands what the fast path met answering `req` (a store that failed) to the full path, which says what went wrong. */
export function markFastPathFailure(req: IncomingMessage, error: unknown): void {
  (req as IncomingMessage & { [FAST_PATH_FAILURE]?: unknown })[FAST_PATH_FAILURE] = error;
}

/** What the fast path met answering `req`, if it failed: the full path answers that rather than asking the store again. */
export function fastPathFailure(req: IncomingMessage): unknown {
  return (req as IncomingMessage & { [FAST_PATH_FAILURE]?: unknown })[FAST_PATH_FAILURE];
}

/** A page request as read from its URL (./page-route.ts): what its answer is kept under, and how to read it. */
export interface PageQuery {
  /** The normalised query (./answer-key.ts); equal keys must mean equal answers. */
  key: string;
  pretty: boolean;
  /** X-Ignored-Parameters of its answer (./query.ts): the parameters the endpoint does not take; undefined for none. */
  ignored: string | undefined;
  read: () => Promise<FreshAnswer>;
}

/** Reads the answer to `query`, and keeps it in `cache`, if given (which keeps it only if it was read at the block the cache is at). */
export async function readAnswer(cache: AnswerCache | undefined, query: PageQuery): Promise<CachedAnswer> {
  const fresh = await query.read();
  const identity = query.pretty ? prettyBody(fresh.body) : fresh.body;
  const answer: CachedAnswer = {
    block: blockToken(fresh.lastBlock), lastBlock: fresh.lastBlock, identity, etag: etagOf(identity), encoded: new Map(), heads: new Map(),
  };
  cache?.set(query.key, answer);
  return answer;
}

/**
 * The answer to the query kept under `key`: from the cache if it holds it at
 * `block`, else read through `query()` and kept. `block` is the store's last
 * block read after the request arrived (undefined if the store could not
 * say: then nothing is looked up or kept), so an answer is never older than
 * the request.
 */
export async function answerAt(
  cache: AnswerCache | undefined, block: string | undefined, key: string, query: () => PageQuery,
): Promise<CachedAnswer> {
  if (cache === undefined || block === undefined) return readAnswer(undefined, query());
  return cache.get(key, block) ?? readAnswer(cache, query());
}

/** What goes out for a request: `304 Not Modified`, or the body in the coding it takes. */
export type Delivery = { notModified: true } | { notModified: false; coding: Coding | undefined; body: Buffer };

const NOT_MODIFIED: Delivery = { notModified: true };

/** The delivery of `answer` (kept under `key`) for a request's If-None-Match and Accept-Encoding. */
export function deliveryOf(
  cache: AnswerCache | undefined, key: string, answer: CachedAnswer,
  ifNoneMatch: string | undefined, acceptEncoding: string | undefined,
): Delivery {
  if (matchesEtag(ifNoneMatch, answer.etag)) return NOT_MODIFIED;
  const coding = chooseCoding(answer, acceptEncoding);
  if (coding === undefined) return { notModified: false, coding, body: answer.identity };
  let body = answer.encoded.get(coding);
  if (body === undefined) {
    body = COMPRESS[coding](answer.identity);
    cache?.addEncoding(key, answer, coding, body);
  }
  return { notModified: false, coding, body };
}

export interface AnswerOptions extends PageRouteOptions {
  request: FastifyRequest;
  reply: FastifyReply;
  query: PageQuery;
}

/** Sends the answer to a page request through Fastify, computing it only if the cache cannot serve it. */
export async function sendAnswer({ request, reply, cache, store, query }: AnswerOptions): Promise<FastifyReply> {
  // A store that cannot say its last block may still answer the page (or fail it, and say why).
  const block = cache === undefined ? undefined : await store.lastBlock().then(blockToken, () => undefined);
  const answer = await answerAt(cache, block, query.key, () => query);
  // On the raw response, the block headers' names in the case the original sends them (Fastify writes names in lower case).
  setHeaders(reply.raw, ownHeaders(answer, mergeVary(reply.raw.getHeader('vary'), 'accept-encoding'), query.ignored));
  const delivery = deliveryOf(cache, query.key, answer, request.headers['if-none-match'], request.headers['accept-encoding']);
  if (delivery.notModified) return reply.code(304).send();
  reply.type(JSON_TYPE);
  // The compression plugin leaves a body that already names its coding alone.
  if (delivery.coding !== undefined) reply.header('content-encoding', delivery.coding);
  return reply.send(delivery.body);
}
