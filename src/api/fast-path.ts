/**
 * Page requests answered before Fastify. A page answer needs none of what
 * Fastify adds on the way (routing, request and reply objects, hooks, the
 * compression plugin), which cost a seventh of an uncached page and most of a
 * cached one (BENCHMARKS.md, "Figures behind the code"). The server's
 * request listener asks this first. A GET of a query endpoint's path
 * whose parameters read well is answered here, from the answer cache or
 * computed and kept, with the headers and bytes the full path writes
 * (./answers.ts). Anything else (another path or method, a parameter the
 * endpoint refuses, a store that fails) goes on to Fastify, which answers it
 * and says what went wrong, with its one catalogue of errors (a failure met
 * here is handed over with the request, not met again: ./answers.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BoundedMap, stringBytes } from '../bounded-map.js';
import { blockToken } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import type { AnswerCache, CachedAnswer } from './answer-cache.js';
import { answerAt, answerHeaders, deliveryOf, markFastPathFailure, type PageQuery } from './answers.js';
import type { PageQueryReader } from './page-route.js';
import { IGNORED_PARAMETERS_HEADER, pathOf } from './query.js';

/**
 * Bytes of URLs and their answer keys remembered, least recently used out:
 * ~20,000 of the usual ~200-byte URLs, and as many bytes whatever the URLs'
 * length (one of 1,000 party ids is 66 KB). A URL remembered skips reading
 * its parameters again.
 */
export const DEFAULT_URL_MAP_BYTES = 4 << 20;

/** A remembered URL's bytes beside its text and its key's: the map's entry and its links. */
const URL_ENTRY_OVERHEAD = 120;

/** What a URL remembered reads as: its answer key, and the X-Ignored-Parameters of its answers. */
interface ReadUrl {
  key: string;
  ignored: string | undefined;
}

export class FastPath {
  /** Raw request URL (path and query, as sent) to what it reads as. */
  private readonly keys: BoundedMap<string, ReadUrl>;

  /** Each exact path's reader. */
  private readonly readers = new Map<string, PageQueryReader>();
  /** Path prefixes and their readers, longest first. */
  private readonly prefixes: [string, PageQueryReader][] = [];

  /** `endpoints`: each endpoint's path (exact, or a prefix) and the reader of its URLs. */
  constructor(
    private readonly cache: AnswerCache,
    private readonly store: QueryStore,
    endpoints: readonly { path: string; prefix: boolean; reader: PageQueryReader }[],
    urlMapBytes = DEFAULT_URL_MAP_BYTES,
  ) {
    this.keys = new BoundedMap(urlMapBytes);
    for (const e of endpoints) {
      if (e.prefix) this.prefixes.push([e.path, e.reader]);
      else this.readers.set(e.path, e.reader);
    }
    this.prefixes.sort(([a], [b]) => b.length - a.length);
  }

  /**
   * Answers `req` if it can, resolving true once the response is written;
   * false leaves the request untouched for the full path.
   */
  async answer(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined) return false;
    let query: PageQuery | undefined;
    let read = this.keys.get(url);
    if (read === undefined) {
      const reader = this.readerOf(url);
      if (reader === undefined) return false; // not a page request
      try {
        query = reader(url);
      } catch {
        return false; // a parameter refused: the full path says which
      }
      read = { key: query.key, ignored: query.ignored };
      this.remember(url, read);
    }
    const { key, ignored } = read;
    let answer: CachedAnswer;
    try {
      const block = blockToken(await this.store.lastBlock());
      // A URL is remembered only once its endpoint's reader has read it well, and reads the same again.
      answer = await answerAt(this.cache, block, key, () => query ?? this.readerOf(url)!(url));
    } catch (e) {
      markFastPathFailure(req, e);
      return false; // the full path says what went wrong
    }
    const headers = answerHeaders(answer, res.getHeader('vary'));
    if (ignored !== undefined) headers[IGNORED_PARAMETERS_HEADER] = ignored;
    const delivery = deliveryOf(this.cache, key, answer, req.headers['if-none-match'], req.headers['accept-encoding']);
    if (delivery.notModified) {
      // As Fastify sends a 304: no body, so no type either.
      delete headers['content-type'];
      res.writeHead(304, headers).end();
    } else {
      if (delivery.coding !== undefined) headers['content-encoding'] = delivery.coding;
      headers['content-length'] = String(delivery.body.byteLength);
      res.writeHead(200, headers).end(delivery.body);
    }
    return true;
  }

  /**
   * The reader of a page endpoint's URL; undefined for any other path, which
   * is told apart without throwing: every other request (/health, say) asks.
   */
  private readerOf(url: string): PageQueryReader | undefined {
    const path = pathOf(url);
    const exact = this.readers.get(path);
    if (exact !== undefined) return exact;
    for (const [prefix, reader] of this.prefixes) if (path.startsWith(prefix)) return reader;
    return undefined;
  }

  private remember(url: string, read: ReadUrl): void {
    this.keys.set(url, read, stringBytes(url) + stringBytes(read.key) + stringBytes(read.ignored ?? '') + URL_ENTRY_OVERHEAD);
  }

  /** The URLs remembered, and their bytes. */
  get remembered(): { entries: number; bytes: number } {
    return this.keys.size;
  }
}
