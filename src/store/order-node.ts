/**
 * The Order node of the API from a decoded Order, in JavaScript: the same
 * text orderJsonSql (./node-json.ts) makes the database write from a row of
 * orders_current, for the states the database keeps only as protobuf
 * messages (an order's history). Ids, times and enums as that row holds
 * them: ids in lower case, times on the microsecond (docs/compatibility.md,
 * sections 3 and 4).
 */
import { OrderError, OrderStatus, OrderType, PeggedReference, Side, TimeInForce, type EnumTable } from '../domain/enums.js';
import type { Order } from '../domain/order.js';
import { toMicros } from '../domain/time.js';

const str = (s: string) => JSON.stringify(s);
const int64 = (v: bigint) => `"${v}"`;
const enumName = (table: EnumTable, n: number) => {
  const name = table.names[n];
  return name === undefined ? String(n) : `"${name}"`;
};

/** The node as GET /api/v2/orders and GET /api/v2/order/{id} answer it. */
export function orderNodeJson(o: Order): string {
  const pegged = o.peggedOrder !== undefined && o.peggedOrder.reference !== 0
    ? `{"reference":${enumName(PeggedReference, o.peggedOrder.reference)},"offset":${str(o.peggedOrder.offset)}}`
    : 'null';
  const iceberg = o.icebergOrder === undefined
    ? ''
    : `,"icebergOrder":{"peakSize":${int64(o.icebergOrder.peakSize)},"minimumVisibleSize":${int64(o.icebergOrder.minimumVisibleSize)},` +
      `"reservedRemaining":${int64(o.icebergOrder.reservedRemaining)}}`;
  // Set to ORDER_ERROR_UNSPECIFIED is the same as not set: the original keeps 0 for both.
  const reason = o.reason === undefined || o.reason === 0 ? '' : `,"reason":${enumName(OrderError, o.reason)}`;
  return (
    `{"id":${str(o.id.toLowerCase())},"marketId":${str(o.marketId.toLowerCase())},"partyId":${str(o.partyId.toLowerCase())},` +
    `"side":${enumName(Side, o.side)},"price":${str(o.price)},"size":${int64(o.size)},"remaining":${int64(o.remaining)},` +
    `"timeInForce":${enumName(TimeInForce, o.timeInForce)},"type":${enumName(OrderType, o.type)},` +
    `"createdAt":${int64(toMicros(o.createdAt))},"status":${enumName(OrderStatus, o.status)},` +
    `"expiresAt":${int64(toMicros(o.expiresAt))},"reference":${str(o.reference)}${reason},` +
    `"updatedAt":${int64(toMicros(o.updatedAt))},"version":${int64(o.version)},"batchId":${int64(o.batchId)},` +
    `"peggedOrder":${pegged},"liquidityProvisionId":${str(o.liquidityProvisionId.toLowerCase())},` +
    `"postOnly":${o.postOnly},"reduceOnly":${o.reduceOnly}${iceberg}}`
  );
}
