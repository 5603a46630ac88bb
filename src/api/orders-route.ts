/** GET /api/v2/orders: the current state of each order, filtered and paged. */
import type { OrderFilter, OrderKey } from '../domain/order.js';
import { orderAnswerKey } from './answer-key.js';
import { orderCursors } from './cursor.js';
import { InvalidFilterError } from './errors.js';
import { pageRoute } from './page-route.js';
import { ORDER_FILTER_PARAMS } from './parameters.js';
import { readOrderFilter } from './read-parameters.js';

export const ORDERS_PATH = '/api/v2/orders';

export const ordersRoute = pageRoute<OrderFilter, OrderKey>({
  path: ORDERS_PATH, field: 'orders', cursors: orderCursors, readFilter: readOrderFilter, answerKey: orderAnswerKey,
  list: (store, filter, page) => store.listOrders(filter, page),
  doc: {
    operationId: 'listOrders', tag: 'orders', summary: 'Orders: the current state of each, filtered and paged',
    description:
      'Newest first (`createdAt` descending, then id ascending) by default, or exactly the reverse with ' +
      '`pagination.newestFirst=false`. Page forward with `pagination.first` and `pagination.after`, backward with ' +
      '`pagination.last` and `pagination.before` (the original pages orders forward and newest first only). ' +
      '`hasNextPage` and `hasPreviousPage` are exact. A `reason` appears only on orders an error stopped or rejected, ' +
      '`icebergOrder` only on iceberg orders. Answers are kept until the next block: an `If-None-Match` naming the ' +
      'ETag is answered 304.',
    filters: ORDER_FILTER_PARAMS, answerSchema: 'ListOrdersResponse', refusals: [InvalidFilterError],
  },
});
