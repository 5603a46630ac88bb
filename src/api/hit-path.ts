/**
 * Cache hits answered before Fastify. A poller asks the same URL many times
 * per block; once a URL's answer is in the answer cache, routing, the
 * request and reply objects, hooks and query parsing only lead back to the
 * same bytes. The server's request listener asks this first: it knows each
 * URL already answered by the answer key its query parsed into, and if the
 * cache holds that answer at the store's last block, in the coding the client
 * takes, writes it with the headers the full path writes (./answers.ts).
 * Anything else (a new URL, a miss, a coding not yet compressed, an error)
 * goes on to Fastify, which answers and teaches this the URL.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { QueryStore } from '../store/store.js';
import { blockToken } from '../domain/page.js';
import type { AnswerCache } from './answer-cache.js';
import { answerHeaders, chooseCoding, matchesEtag } from './answers.js';

/**
 * URLs remembered at most; past it the map starts again. A URL costs its
 * length and its key's (~200 bytes each): 20,000 of them, a few MB.
 */
const MAX_URLS = 20_000;

export class HitPath {
  /** Raw request URL (path and query, as sent) to its answer key. */
  private readonly keys = new Map<string, string>();
  /** The last block as read for a request this passed on: the full path need not read it again. */
  private readonly blocks = new WeakMap<IncomingMessage, string>();

  constructor(private readonly cache: AnswerCache, private readonly store: QueryStore) {}

  /** The full path's word that this URL's answer is kept under `key`. */
  remember(url: string, key: string): void {
    if (this.keys.size >= MAX_URLS && !this.keys.has(url)) this.keys.clear();
    this.keys.set(url, key);
  }

  /**
   * Answers `req` from the cache if it can, resolving true once the response
   * is written; false leaves the request untouched for the full path.
   */
  async answer(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (req.method !== 'GET' || req.url === undefined) return false;
    const key = this.keys.get(req.url);
    if (key === undefined) return false;
    let block: string;
    try {
      block = blockToken(await this.store.lastBlock());
    } catch {
      return false; // the full path says what went wrong
    }
    const answer = this.cache.get(key, block);
    if (answer === undefined) return this.passOn(req, block);
    const headers = answerHeaders(answer);
    if (matchesEtag(req.headers['if-none-match'], answer.etag)) {
      // As Fastify sends a 304: no body, so no type either.
      delete headers['content-type'];
      res.writeHead(304, headers).end();
    } else {
      const coding = chooseCoding(answer, req.headers['accept-encoding']);
      const body = coding === undefined ? answer.identity : answer.encoded.get(coding);
      // Not compressed this way yet: the full path compresses it and keeps it.
      if (body === undefined) return this.passOn(req, block);
      if (coding !== undefined) headers['content-encoding'] = coding;
      headers['content-length'] = String(body.byteLength);
      res.writeHead(200, headers).end(body);
    }
    return true;
  }

  /**
   * The store's last block as this read it for `req`, if it did. It was read
   * after the request arrived, so an answer read at it is no older than the
   * request.
   */
  blockReadFor(req: IncomingMessage): string | undefined {
    return this.blocks.get(req);
  }

  private passOn(req: IncomingMessage, block: string): false {
    this.blocks.set(req, block);
    return false;
  }
}
