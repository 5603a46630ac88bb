/**
 * What the document says of the companion endpoints (docs/compatibility.md,
 * section 12, "The endpoints beside the list"): one order and its
 * versions (../order-route.ts), the signer-removed bundles
 * (../bundles-route.ts) and the order stream (../stream/, served outside
 * Fastify). Each reader reads its parameters through these declarations
 * (../parameters.ts), and each entry's `read` is that reader.
 */
import {
  InvalidEpochError,
  InvalidFilterError,
  InvalidPaginationError,
  OrderIdInvalidError,
  OrderIdMissingError,
  OrderNotFoundError,
  OrderVersionInvalidError,
  StreamIdInvalidError,
  StreamLimitError,
  StreamResumeError,
  UnparsableFieldError,
} from '../errors.js';
import { readOrderUrl } from '../order-request.js';
import type { PageDoc } from '../page-route.js';
import { BUNDLE_FILTER_PARAMS, ORDER_ID_PARAM, ORDER_VERSION_PARAM, PAGINATION_PARAMS, PRETTY_PARAM, STREAM_ORDERS_PARAMS } from '../parameters.js';
import { readStreamRequest, STREAM_ORDERS_PATH } from '../stream/request.js';
import { ANSWER_EXAMPLES } from './examples.js';
import type { RouteDoc } from './route-doc.js';
import { ref } from './schemas.js';

export const ORDER_DOC: RouteDoc = {
  path: '/api/v2/order/{orderId}', operationId: 'getOrder', tag: 'orders', summary: 'One order: its current state, or one version',
  description:
    'The order\'s current state, or with `version` its state at the end of that version. A well-formed id no order has: 404.',
  parameters: [ORDER_ID_PARAM, ORDER_VERSION_PARAM, PRETTY_PARAM],
  answer: { description: 'The order.', schema: ref('GetOrderResponse'), example: ANSWER_EXAMPLES['getOrder']?.body, blockHeaders: true, etag: true },
  refusals: [OrderIdMissingError, OrderIdInvalidError, OrderVersionInvalidError, OrderNotFoundError, UnparsableFieldError],
  read: readOrderUrl,
};

/** Its `read` is the page endpoint's own (../page-route.ts adds it). */
export const ORDER_VERSIONS_DOC: Omit<RouteDoc, 'read'> = {
  path: '/api/v2/order/versions/{orderId}', operationId: 'listOrderVersions', tag: 'orders',
  summary: 'Every version of one order, highest first',
  description: 'One row per version, the highest first, paged. A well-formed id no order has: an empty page.',
  parameters: [ORDER_ID_PARAM, ...Object.values(PAGINATION_PARAMS), PRETTY_PARAM],
  answer: {
    description: 'One page of versions.', schema: ref('ListOrdersResponse'), example: ANSWER_EXAMPLES['listOrderVersions']?.body,
    blockHeaders: true, etag: true,
  },
  refusals: [OrderIdMissingError, OrderIdInvalidError, InvalidPaginationError],
};

/** The doc of ../bundles-route.ts's removedBundlesRoute. */
export const REMOVED_BUNDLES_PAGE_DOC: PageDoc = {
  operationId: 'listERC20MultiSigSignerRemovedBundles', tag: 'bundles', summary: 'Signer-removed bundles, filtered and paged',
  description:
    'Bundles of signatures that remove a signer from the ERC20 multisig contract: one per submitter (each validator), ' +
    'by the time they were made (newest first by default, or exactly the reverse). Paged as the orders are.',
  filters: BUNDLE_FILTER_PARAMS, answerSchema: 'ListERC20MultiSigSignerRemovedBundlesResponse',
  refusals: [InvalidFilterError, InvalidEpochError],
};

export const STREAM_ORDERS_DOC: RouteDoc = {
  path: STREAM_ORDERS_PATH, operationId: 'observeOrders', tag: 'orders', summary: 'A stream of orders: a snapshot, then every change',
  description:
    'Over plain HTTP, a long chunked answer of newline-delimited JSON frames (gzip-compressed and flushed per frame ' +
    'when asked); over WebSocket (the same URL with an Upgrade), one text message per frame. First the live orders ' +
    'that match, 50 a frame, the last frame saying `lastPage`; then each block\'s changes. Enums come as numbers, ' +
    'as the original\'s stream sends them.',
  parameters: Object.values(STREAM_ORDERS_PARAMS),
  answer: {
    description: 'Frames, one JSON object a line, until the client leaves or an error frame ends it.',
    schema: ref('ObserveOrdersFrame'), blockHeaders: false,
  },
  refusals: [StreamIdInvalidError, StreamLimitError, StreamResumeError, UnparsableFieldError],
  read: readStreamRequest,
};
