/**
 * Every route the OpenAPI document describes, in the page's order. A route
 * registered and not listed here (or listed and not registered) fails
 * test/api/openapi.test.ts.
 */
import { bundlesEndpoint, removedBundlesEndpoint } from '../bundles-route.js';
import { HEALTH_DOC, READY_DOC } from '../health-route.js';
import { INGEST_STATUS_DOC } from '../ingest-status-route.js';
import { METRICS_DOC } from '../metrics/metrics-route.js';
import { orderEndpoint, versionsEndpoint } from '../order-route.js';
import { ordersEndpoint } from '../orders-route.js';
import { STREAM_ORDERS_DOC } from './companions.js';
import type { RouteDoc } from './route-doc.js';

export const ROUTE_DOCS: readonly RouteDoc[] = [
  ordersEndpoint.doc, orderEndpoint.doc, versionsEndpoint.doc, STREAM_ORDERS_DOC,
  bundlesEndpoint.doc, removedBundlesEndpoint.doc,
  HEALTH_DOC, READY_DOC, INGEST_STATUS_DOC, METRICS_DOC,
];
