/** GET /api/v2/orders: the current state of each order, filtered and paged. */
import type { FastifyInstance } from 'fastify';
import type { QueryStore } from '../store/store.js';
import { setBlockHeaders } from './block-headers.js';
import { orderCursors } from './cursor.js';
import { connectionJson, sendJson } from './envelope.js';
import { readOrderFilter, readPagination, wantsPretty } from './params.js';
import { readQuery } from './query.js';

export const ORDERS_PATH = '/api/v2/orders';

export async function ordersRoute(app: FastifyInstance, { store }: { store: QueryStore }): Promise<void> {
  app.get(ORDERS_PATH, async (request, reply) => {
    const query = readQuery(request.url);
    const page = readPagination(query, orderCursors);
    const filter = readOrderFilter(query);
    const result = await store.listOrders(filter, page);
    setBlockHeaders(reply, result.lastBlock);
    return sendJson(reply, connectionJson('orders', result, orderCursors), wantsPretty(query));
  });
}
