/**
 * A paged query endpoint (GET, filter and pagination parameters, the
 * original's connection envelope), answered through the answer cache. The
 * orders and bundles endpoints differ only in what this takes.
 */
import type { FastifyInstance } from 'fastify';
import type { Page, PageRequest } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import { sendAnswer, type PageRouteOptions } from './answers.js';
import type { CursorCodec } from './cursor.js';
import { connectionJson } from './envelope.js';
import { readPagination, wantsPretty } from './params.js';
import { readQuery, type QueryParams } from './query.js';

export interface PageEndpoint<F, K> {
  path: string;
  /** The envelope's field naming the connection: `orders`, `bundles`. */
  field: string;
  cursors: CursorCodec<K>;
  readFilter: (query: QueryParams) => F;
  /** The normalised query (./answer-key.ts). */
  answerKey: (filter: F, page: PageRequest<K>, cursors: CursorCodec<K>, pretty: boolean) => string;
  list: (store: QueryStore, filter: F, page: PageRequest<K>) => Promise<Page<K>>;
}

/** The Fastify plugin serving `endpoint`. */
export function pageRoute<F, K>(endpoint: PageEndpoint<F, K>): (app: FastifyInstance, options: PageRouteOptions) => Promise<void> {
  const { path, field, cursors } = endpoint;
  return async (app, options) => {
    app.get(path, async (request, reply) => {
      const query = readQuery(request.url);
      const page = readPagination(query, cursors);
      const filter = endpoint.readFilter(query);
      const pretty = wantsPretty(query);
      return sendAnswer({
        ...options, request, reply, pretty,
        key: endpoint.answerKey(filter, page, cursors, pretty),
        read: async () => {
          const result = await endpoint.list(options.store, filter, page);
          return { json: connectionJson(field, result, cursors), lastBlock: result.lastBlock };
        },
      });
    });
  };
}
