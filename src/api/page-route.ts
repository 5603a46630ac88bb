/**
 * A paged query endpoint (GET, filter and pagination parameters, the
 * original's connection envelope), answered through the answer cache. The
 * orders and bundles endpoints differ only in what this takes.
 */
import type { FastifyInstance } from 'fastify';
import type { Page, PageRequest } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import { fastPathFailure, sendAnswer, type PageQuery, type PageRouteOptions } from './answers.js';
import type { CursorCodec } from './cursor.js';
import { connectionBody } from './envelope.js';
import { readPagination, wantsPretty, type ReadLimits } from './params.js';
import { ignoredParametersValue, readQuery, type QueryParams } from './query.js';

export interface PageEndpoint<F, K> {
  path: string;
  /** The envelope's field naming the connection: `orders`, `bundles`. */
  field: string;
  cursors: CursorCodec<K>;
  readFilter: (query: QueryParams, limits: ReadLimits) => F;
  /** The normalised query (./answer-key.ts). */
  answerKey: (filter: F, page: PageRequest<K>, cursors: CursorCodec<K>, pretty: boolean) => string;
  list: (store: QueryStore, filter: F, page: PageRequest<K>) => Promise<Page<K>>;
}

/** Reads a request URL of the endpoint; throws ApiError for a parameter it refuses. */
export type PageQueryReader = (url: string) => PageQuery;

function pageQueryReader<F, K>(endpoint: PageEndpoint<F, K>, store: QueryStore, limits: ReadLimits): PageQueryReader {
  const { field, cursors } = endpoint;
  return (url) => {
    const query = readQuery(url);
    const page = readPagination(query, cursors);
    const filter = endpoint.readFilter(query, limits);
    const pretty = wantsPretty(query);
    return {
      key: endpoint.answerKey(filter, page, cursors, pretty),
      pretty,
      ignored: ignoredParametersValue(query.ignoredKeys()),
      read: async () => {
        const result = await endpoint.list(store, filter, page);
        return { body: connectionBody(field, result, cursors), lastBlock: result.lastBlock };
      },
    };
  };
}

/** The Fastify plugin serving `endpoint`. */
function pageRoute<F, K>(endpoint: PageEndpoint<F, K>): (app: FastifyInstance, options: PageRouteOptions) => Promise<void> {
  return async (app, options) => {
    const readPageQuery = pageQueryReader(endpoint, options.store, options.limits);
    app.get(endpoint.path, async (request, reply) => {
      // What the fast path met reading this very request is answered, not met again (a query cut off, say).
      const failed = fastPathFailure(request.raw);
      if (failed !== undefined) throw failed;
      return sendAnswer({ ...options, request, reply, query: readPageQuery(request.url) });
    });
  };
}

/** What the server needs of a page endpoint, whatever its filter and key. */
export interface ServedEndpoint {
  path: string;
  /** The Fastify plugin serving it: the full path. */
  route: (app: FastifyInstance, options: PageRouteOptions) => Promise<void>;
  /** The reader of its URLs, for the fast path (./fast-path.ts). */
  reader: (store: QueryStore, limits: ReadLimits) => PageQueryReader;
}

export function servedEndpoint<F, K>(endpoint: PageEndpoint<F, K>): ServedEndpoint {
  return { path: endpoint.path, route: pageRoute(endpoint), reader: (store, limits) => pageQueryReader(endpoint, store, limits) };
}
