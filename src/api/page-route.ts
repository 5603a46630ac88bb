/**
 * A paged query endpoint (GET, filter and pagination parameters, the
 * original's connection), answered through the answer cache. The
 * endpoints differ only in what this takes. An endpoint with a path
 * parameter (an order's versions) is served under a path prefix.
 */
import type { FastifyInstance } from 'fastify';
import type { Page, PageRequest } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import { fastPathFailure, sendAnswer, type PageQuery, type PageRouteOptions } from './answers.js';
import type { CursorCodec } from './cursor.js';
import { connectionBody } from './connection.js';
import { InvalidPaginationError, MalformedQueryError } from './errors.js';
import { ANSWER_EXAMPLES } from './openapi/examples.js';
import type { RefusalKind, RouteDoc } from './openapi/route-doc.js';
import { ref } from './openapi/schemas.js';
import { PAGINATION_PARAMS, PRETTY_PARAM, type ParameterDecl } from './parameters.js';
import { DEFAULT_READ_LIMITS, type ReadLimits } from './http-options.js';
import { readPagination, wantsPretty } from './read-parameters.js';
import { ignoredParametersValue, pathOf, readQuery, type QueryParams } from './query.js';

export interface PageEndpoint<F, K> {
  /** The endpoint's path; with `prefix`, what its paths start with (ending in `/`). */
  path: string;
  /** The path goes on with a parameter (an order id), which readFilter reads first, as the original checks it first. */
  prefix?: boolean;
  /** The envelope's field naming the connection: `orders`, `bundles`. */
  field: string;
  cursors: CursorCodec<K>;
  readFilter: (query: QueryParams, limits: ReadLimits, path: string) => F;
  /** The normalised query (./answer-key.ts). */
  answerKey: (filter: F, page: PageRequest<K>, cursors: CursorCodec<K>, pretty: boolean) => string;
  list: (store: QueryStore, filter: F, page: PageRequest<K>) => Promise<Page<K>>;
  /**
   * What the OpenAPI document says of it: a listing's page doc, or, for an
   * endpoint served under a prefix (whose documented path names its path
   * parameter), the whole route's doc. Either way its `read` is the endpoint's own.
   */
  doc: PageDoc | Omit<RouteDoc, 'read'>;
}

/** A listing's doc; the pagination and `pretty` parameters and their refusals are added. */
export interface PageDoc {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** The parameters readFilter reads (../parameters.ts). */
  filters: Readonly<Record<string, ParameterDecl>>;
  /** The answer's schema, a component of ./openapi/schemas.ts. */
  answerSchema: string;
  /** What readFilter refuses. */
  refusals: readonly RefusalKind[];
}

/** A request URL of the endpoint read; throws ApiError for a parameter it refuses. */
function readPageRequest<F, K>(endpoint: PageEndpoint<F, K>, url: string, limits: ReadLimits) {
  const query = readQuery(url);
  const path = pathOf(url);
  let filter: F | undefined;
  if (endpoint.prefix === true) filter = endpoint.readFilter(query, limits, path);
  const page = readPagination(query, endpoint.cursors);
  filter ??= endpoint.readFilter(query, limits, path);
  return { page, filter, pretty: wantsPretty(query), query };
}

/** Reads a request URL of the endpoint; throws ApiError for a parameter it refuses. */
export type PageQueryReader = (url: string) => PageQuery;

function pageQueryReader<F, K>(endpoint: PageEndpoint<F, K>, store: QueryStore, limits: ReadLimits): PageQueryReader {
  const { field, cursors } = endpoint;
  return (url) => {
    const { page, filter: read, pretty, query } = readPageRequest(endpoint, url, limits);
    return {
      key: endpoint.answerKey(read, page, cursors, pretty),
      pretty,
      ignored: ignoredParametersValue(query.ignoredKeys()),
      read: async () => {
        const result = await endpoint.list(store, read, page);
        return { body: connectionBody(field, result, cursors), lastBlock: result.lastBlock };
      },
    };
  };
}

/** The Fastify plugin serving the endpoint whose URLs `reader` reads, at `path` (a prefix: everything under it). */
export function queryRoute(
  path: string, prefix: boolean, reader: (store: QueryStore, limits: ReadLimits) => PageQueryReader,
): (app: FastifyInstance, options: PageRouteOptions) => Promise<void> {
  return async (app, options) => {
    const readPageQuery = reader(options.store, options.limits);
    app.get(prefix ? `${path}*` : path, async (request, reply) => {
      // What the fast path met reading this very request is answered, not met again (a query cut off, say).
      const failed = fastPathFailure(request.raw);
      if (failed !== undefined) throw failed;
      return sendAnswer({ ...options, request, reply, query: readPageQuery(request.url) });
    });
  };
}

/** What the server needs of a cached query endpoint, whatever its filter and key. */
export interface PageRoute {
  path: string;
  /** Served under `path` as a prefix. */
  prefix: boolean;
  /** The Fastify plugin serving it. */
  route: (app: FastifyInstance, options: PageRouteOptions) => Promise<void>;
  /** The reader of its URLs, for the fast path (./fast-path.ts). */
  reader: (store: QueryStore, limits: ReadLimits) => PageQueryReader;
  /** What the OpenAPI document says of it. */
  doc: RouteDoc;
}

function routeDoc<F, K>(endpoint: PageEndpoint<F, K>): RouteDoc {
  const { doc } = endpoint;
  const read = (url: string) => readPageRequest(endpoint, url, DEFAULT_READ_LIMITS);
  if ('parameters' in doc) return { ...doc, read };
  return {
    path: endpoint.path, operationId: doc.operationId, tag: doc.tag, summary: doc.summary, description: doc.description,
    parameters: [...Object.values(PAGINATION_PARAMS), ...Object.values(doc.filters), PRETTY_PARAM],
    answer: {
      description: 'One page, and whether rows lie beyond it either way.',
      schema: ref(doc.answerSchema), example: ANSWER_EXAMPLES[doc.operationId]?.body, blockHeaders: true, etag: true,
    },
    refusals: [InvalidPaginationError, MalformedQueryError, ...doc.refusals],
    read,
  };
}

export function pageRoute<F, K>(endpoint: PageEndpoint<F, K>): PageRoute {
  const reader = (store: QueryStore, limits: ReadLimits) => pageQueryReader(endpoint, store, limits);
  const prefix = endpoint.prefix === true;
  return { path: endpoint.path, prefix, route: queryRoute(endpoint.path, prefix, reader), reader, doc: routeDoc(endpoint) };
}
