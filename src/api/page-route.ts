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
import { InvalidPaginationError, MalformedQueryError } from './errors.js';
import { ANSWER_EXAMPLES } from './openapi/examples.js';
import type { RefusalKind, RouteDoc } from './openapi/route-doc.js';
import { ref } from './openapi/schemas.js';
import { PAGINATION_PARAMS, PRETTY_PARAM, type ParameterDecl } from './parameters.js';
import { DEFAULT_READ_LIMITS, readPagination, wantsPretty, type ReadLimits } from './params.js';
import { readQuery, type QueryParams } from './query.js';

export interface PageEndpoint<F, K> {
  path: string;
  /** The envelope's field naming the connection: `orders`, `bundles`. */
  field: string;
  cursors: CursorCodec<K>;
  readFilter: (query: QueryParams, limits: ReadLimits) => F;
  /** The normalised query (./answer-key.ts). */
  answerKey: (filter: F, page: PageRequest<K>, cursors: CursorCodec<K>, pretty: boolean) => string;
  list: (store: QueryStore, filter: F, page: PageRequest<K>) => Promise<Page<K>>;
  /** What the OpenAPI document says of it; the pagination and `pretty` parameters and their refusals are added. */
  doc: {
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
  };
}

/** A request URL of the endpoint read; throws ApiError for a parameter it refuses. */
function readPageRequest<F, K>(endpoint: PageEndpoint<F, K>, url: string, limits: ReadLimits) {
  const query = readQuery(url);
  return { page: readPagination(query, endpoint.cursors), filter: endpoint.readFilter(query, limits), pretty: wantsPretty(query) };
}

/** Reads a request URL of the endpoint; throws ApiError for a parameter it refuses. */
export type PageQueryReader = (url: string) => PageQuery;

function pageQueryReader<F, K>(endpoint: PageEndpoint<F, K>, store: QueryStore, limits: ReadLimits): PageQueryReader {
  const { field, cursors } = endpoint;
  return (url) => {
    const { page, filter, pretty } = readPageRequest(endpoint, url, limits);
    return {
      key: endpoint.answerKey(filter, page, cursors, pretty),
      pretty,
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
  /** What the OpenAPI document says of it. */
  doc: RouteDoc;
}

function routeDoc<F, K>(endpoint: PageEndpoint<F, K>): RouteDoc {
  const { doc } = endpoint;
  return {
    path: endpoint.path, operationId: doc.operationId, tag: doc.tag, summary: doc.summary, description: doc.description,
    parameters: [...Object.values(PAGINATION_PARAMS), ...Object.values(doc.filters), PRETTY_PARAM],
    answer: {
      description: 'One page, and whether rows lie beyond it either way.',
      schema: ref(doc.answerSchema), example: ANSWER_EXAMPLES[doc.operationId]?.body, blockHeaders: true, etag: true,
    },
    refusals: [InvalidPaginationError, MalformedQueryError, ...doc.refusals],
    read: (url) => readPageRequest(endpoint, url, DEFAULT_READ_LIMITS),
  };
}

export function servedEndpoint<F, K>(endpoint: PageEndpoint<F, K>): ServedEndpoint {
  return {
    path: endpoint.path, route: pageRoute(endpoint), reader: (store, limits) => pageQueryReader(endpoint, store, limits),
    doc: routeDoc(endpoint),
  };
}

/** The document's entry of a page endpoint declared and not served yet (./openapi/companions.ts). */
export function plannedPageDoc(path: string, doc: PageEndpoint<unknown, unknown>['doc']): RouteDoc {
  return { ...routeDoc({ path, doc } as PageEndpoint<unknown, unknown>), read: undefined, planned: true };
}
