/** GET /api/v2/orders: the current state of each order, filtered and paged. */
import type { OrderFilter, OrderKey } from '../domain/order.js';
import { orderAnswerKey } from './answer-key.js';
import { orderCursors } from './cursor.js';
import { servedEndpoint } from './page-route.js';
import { readOrderFilter } from './params.js';

export const ORDERS_PATH = '/api/v2/orders';

export const ordersEndpoint = servedEndpoint<OrderFilter, OrderKey>({
  path: ORDERS_PATH, field: 'orders', cursors: orderCursors, readFilter: readOrderFilter, answerKey: orderAnswerKey,
  list: (store, filter, page) => store.listOrders(filter, page),
});
