/** GET /api/v2/orders: the current state of each order, filtered and paged. */
import { orderAnswerKey } from './answer-key.js';
import { orderCursors } from './cursor.js';
import { pageRoute } from './page-route.js';
import { readOrderFilter } from './params.js';

export const ORDERS_PATH = '/api/v2/orders';

export const ordersRoute = pageRoute({
  path: ORDERS_PATH, field: 'orders', cursors: orderCursors, readFilter: readOrderFilter, answerKey: orderAnswerKey,
  list: (store, filter, page) => store.listOrders(filter, page),
});
