/** GET /api/v2/orders: the current state of each order, filtered and paged. */
import type { FastifyInstance } from 'fastify';
import { orderAnswerKey } from './answer-key.js';
import { sendAnswer, type PageRouteOptions } from './answers.js';
import { orderCursors } from './cursor.js';
import { connectionJson } from './envelope.js';
import { readOrderFilter, readPagination, wantsPretty } from './params.js';
import { readQuery } from './query.js';

export const ORDERS_PATH = '/api/v2/orders';

export async function ordersRoute(app: FastifyInstance, options: PageRouteOptions): Promise<void> {
  app.get(ORDERS_PATH, async (request, reply) => {
    const query = readQuery(request.url);
    const page = readPagination(query, orderCursors);
    const filter = readOrderFilter(query);
    const pretty = wantsPretty(query);
    return sendAnswer({
      ...options, request, reply, pretty,
      key: orderAnswerKey(filter, page, orderCursors, pretty),
      read: async () => {
        const result = await options.store.listOrders(filter, page);
        return { json: connectionJson('orders', result, orderCursors), lastBlock: result.lastBlock };
      },
    });
  });
}
