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
import type { HeaderList } from './answer-headers.js';
import { answerAt, answerHead, deliveryOf, markFastPathFailure, readAnswer, type PageQuery } from './answers.js';
import type { PageQueryReader } from './page-route.js';
import { pathOf } from './query.js';

/**
 * Bytes of URLs and their answer keys remembered, least recently used out:
 * ~20,000 of the usual ~200-byte URLs, and as many bytes whatever the URLs'
 * length (one of 1,000 party ids is 66 KB). A URL remembered skips reading
 * its parameters again.
 */
export const DEFAULT_URL_MAP_BYTES = 4 << 20;

/** A remembered URL's bytes beside its text and its key's: the map's entry and its links. */
const URL_ENTRY_OVERHEAD = 120;

/** What a URL remembered reads as: its answer key, the X-Ignored-Parameters of its answers, the tally of the route that serves it. */
interface ReadUrl {
  key: string;
  ignored: string | undefined;
  tally: AnswerTally;
}

/** Where a route's answers are counted (the metrics' RouteTally). */
export interface AnswerTally {
  /** Counts an answer with `status` to a request that arrived at `started` (performance.now()). */
  add(status: number, started: number): void;
}

/** A page endpoint as the fast path serves it: its path (exact, or a prefix), its route's template, the reader of its URLs. */
export interface FastPathEndpoint {
  path: string;
  prefix: boolean;
  route: string;
  reader: PageQueryReader;
}

export interface FastPathOptions {
  cache: AnswerCache;
  store: QueryStore;
  endpoints: readonly FastPathEndpoint[];
  /** The front door's headers when they are every request's (./front-door.ts): answers' heads built on them are kept. */
  sharedDoor: HeaderList;
  /** The tally of a route's answers, asked once per URL remembered. */
  tally: (route: string) => AnswerTally;
  urlMapBytes?: number | undefined;
}

export class FastPath {
  /** Raw request URL (path and query, as sent) to what it reads as. */
  private readonly keys: BoundedMap<string, ReadUrl>;
  /** Each exact path's endpoint. */
  private readonly exact = new Map<string, FastPathEndpoint>();
  /** Endpoints served under a path prefix, longest first. */
  private readonly prefixes: FastPathEndpoint[] = [];
  /**
   * blockToken() of the store's last block as read in this turn of the event
   * loop, null before the turn's first read: every request handled in a turn
   * arrived before it began, so one read made in it is made after each of
   * them arrived, as answerAt asks (./answers.ts). A read per request cost
   * a cached answer 15% of its time; a turn under load handles several
   * requests (BENCHMARKS.md, "The fast path won back (issue 30)").
   */
  private turnBlock: string | null = null;
  private readonly endTurn = () => {
    this.turnBlock = null;
  };

  constructor(private readonly options: FastPathOptions) {
    this.keys = new BoundedMap(options.urlMapBytes ?? DEFAULT_URL_MAP_BYTES);
    for (const e of options.endpoints) {
      if (e.prefix) this.prefixes.push(e);
      else this.exact.set(e.path, e);
    }
    this.prefixes.sort((a, b) => b.path.length - a.path.length);
  }

  /**
   * Answers `req` if it can: true when it has (a kept answer, at the block
   * read in this turn: no promise, no closure), false when it is no request
   * of this path's (`req` left untouched for the full path), else a promise
   * of either, once its answer is read. `door`: the front door's headers for it.
   */
  answer(req: IncomingMessage, res: ServerResponse, door: HeaderList, started: number): boolean | Promise<boolean> {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined) return false;
    const read = this.keys.get(url);
    if (read === undefined) return this.endpointOf(url) === undefined ? false : this.answerLater(req, res, door, started, url, undefined, null);
    const block = this.blockNow();
    if (block === null) return this.answerLater(req, res, door, started, url, read, null);
    const answer = this.options.cache.get(read.key, block);
    if (answer === undefined) return this.answerLater(req, res, door, started, url, read, block);
    this.send(req, res, door, read, answer, started);
    return true;
  }

  /** The last block's token for this turn, read now if the store can say without waiting; null when only a wait can tell. */
  private blockNow(): string | null {
    if (this.turnBlock !== null) return this.turnBlock;
    const { store } = this.options;
    if (store.lastBlockSync === undefined) return null;
    try {
      this.turnBlock = blockToken(store.lastBlockSync());
    } catch {
      return null; // the way that waits meets it again, and says what went wrong
    }
    setImmediate(this.endTurn);
    return this.turnBlock;
  }

  /**
   * A request whose URL is read for the first time, or whose answer is not
   * kept at `block` (the turn's block, null if not read yet): read, answered
   * and kept. False (the full path says what went wrong) when a parameter is
   * refused or the store fails.
   */
  private async answerLater(
    req: IncomingMessage, res: ServerResponse, door: HeaderList, started: number, url: string, known: ReadUrl | undefined, block: string | null,
  ): Promise<boolean> {
    let read = known;
    let query: PageQuery | undefined;
    if (read === undefined) {
      const endpoint = this.endpointOf(url)!;
      try {
        query = endpoint.reader(url);
      } catch {
        return false; // a parameter refused: the full path says which
      }
      read = { key: query.key, ignored: query.ignored, tally: this.options.tally(endpoint.route) };
      this.remember(url, read);
    }
    const { cache, store } = this.options;
    // A URL is remembered only once its endpoint's reader has read it well, and reads the same again.
    const reading = () => query ?? this.endpointOf(url)!.reader(url);
    let answer: CachedAnswer;
    try {
      // Not kept at the turn's block: the cache was asked already.
      answer = block !== null
        ? await readAnswer(cache, reading())
        : await answerAt(cache, blockToken(await store.lastBlock()), read.key, reading);
    } catch (e) {
      markFastPathFailure(req, e);
      return false;
    }
    this.send(req, res, door, read, answer, started);
    return true;
  }

  private send(req: IncomingMessage, res: ServerResponse, door: HeaderList, read: ReadUrl, answer: CachedAnswer, started: number): void {
    const delivery = deliveryOf(this.options.cache, read.key, answer, req.headers['if-none-match'], req.headers['accept-encoding']);
    const head = answerHead(answer, delivery, door, this.options.sharedDoor, read.ignored);
    // Node takes a list as it is, but its typings say mutable.
    if (delivery.notModified) res.writeHead(304, head as string[]).end();
    else res.writeHead(200, head as string[]).end(delivery.body);
    read.tally.add(res.statusCode, started);
  }

  /**
   * The endpoint of a URL; undefined for any other path, which is told
   * apart without throwing: every other request (/health, say) asks.
   */
  private endpointOf(url: string): FastPathEndpoint | undefined {
    const path = pathOf(url);
    const exact = this.exact.get(path);
    if (exact !== undefined) return exact;
    for (const e of this.prefixes) if (path.startsWith(e.path)) return e;
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
