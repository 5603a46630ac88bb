/**
 * Every route the OpenAPI document describes, in the page's order. A route
 * registered and not listed here (or listed and not registered) fails
 * test/api/openapi.test.ts.
 */
import { bundlesRoute, removedBundlesRoute } from '../bundles-route.js';
import { HEALTH_DOC, READY_DOC } from '../health-route.js';
import { INGEST_STATUS_DOC } from '../ingest-status-route.js';
import { METRICS_DOC } from '../metrics/metrics-route.js';
import { orderRoute, versionsRoute } from '../order-route.js';
import { ordersRoute } from '../orders-route.js';
import { STREAM_ORDERS_DOC } from './companions.js';
import type { RouteDoc } from './route-doc.js';

export const ROUTE_DOCS: readonly RouteDoc[] = [
  ordersRoute.doc, orderRoute.doc, versionsRoute.doc, STREAM_ORDERS_DOC,
  bundlesRoute.doc, removedBundlesRoute.doc,
  HEALTH_DOC, READY_DOC, INGEST_STATUS_DOC, METRICS_DOC,
];
