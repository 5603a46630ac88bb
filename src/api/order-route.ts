/**
 * GET /api/v2/order/{orderId} (one order, `?version=N` for the last state of
 * a version) and GET /api/v2/order/versions/{orderId} (its versions, paged),
 * answered through the answer cache as the lists are.
 */
import type { OrderVersionKey } from '../domain/order.js';
import type { PageRequest } from '../domain/page.js';
import type { QueryStore } from '../store/store.js';
import type { CursorCodec } from './cursor.js';
import { versionCursors } from './cursor.js';
import { InvalidPaginationError, OrderNotFoundError } from './errors.js';
import { ORDER_DOC, ORDER_VERSIONS_DOC } from './openapi/companions.js';
import { ORDER_PREFIX, VERSIONS_PREFIX, readOrderId, readOrderUrl } from './order-request.js';
import { queryRoute, pageRoute, type PageQueryReader, type PageRoute } from './page-route.js';
import { ignoredParametersValue } from './query.js';

function orderReader(store: QueryStore): PageQueryReader {
  return (url) => {
    const { id, version, pretty, query } = readOrderUrl(url);
    return {
      key: JSON.stringify(['order', id, version === undefined ? null : String(version), pretty]),
      pretty,
      ignored: ignoredParametersValue(query.ignoredKeys()),
      read: async () => {
        const found = await store.getOrder(id, version);
        // As the original words it: the id as asked for, and no resource of it.
        if (found.node === undefined) throw new OrderNotFoundError(`orderID: ${id}: no resource corresponding to this id`);
        return { body: Buffer.from(`{"order":${found.node}}`), lastBlock: found.lastBlock };
      },
    };
  };
}

export const orderRoute: PageRoute = {
  path: ORDER_PREFIX, prefix: true, route: queryRoute(ORDER_PREFIX, true, orderReader), reader: orderReader, doc: ORDER_DOC,
};

/** The versions of one order: the listing's filter is the order's id. */
function versionAnswerKey(id: string, page: PageRequest<OrderVersionKey>, cursors: CursorCodec<OrderVersionKey>, pretty: boolean): string {
  return JSON.stringify(['versions', id, page.newestFirst, page.mode, page.limit, page.cursor && cursors.encode(page.cursor), pretty]);
}

export const versionsRoute = pageRoute<string, OrderVersionKey>({
  path: VERSIONS_PREFIX, prefix: true, field: 'orders', cursors: versionCursors,
  readFilter: (_query, _limits, path) => readOrderId(path, VERSIONS_PREFIX),
  answerKey: versionAnswerKey,
  list: (store, id, page) => {
    if (page.cursor !== undefined && page.cursor.id !== id) {
      throw new InvalidPaginationError('the cursor is of another order\'s versions');
    }
    return store.listOrderVersions(id, page);
  },
  doc: ORDER_VERSIONS_DOC,
});
