import { STATUS, TIF, TYPE } from './enums.js';

/** One state of an order, as an Order event carries it. Enums are numbers. */
export interface Order {
  id: string;
  marketId: string;
  partyId: string;
  side: number;
  price: string;
  size: bigint;
  remaining: bigint;
  timeInForce: number;
  type: number;
  createdAt: bigint;
  status: number;
  expiresAt: bigint;
  reference: string;
  /** OrderError; present only when the event set it. */
  reason?: number;
  updatedAt: bigint;
  version: bigint;
  batchId: bigint;
  peggedOrder?: PeggedOrder;
  liquidityProvisionId: string;
  postOnly: boolean;
  reduceOnly: boolean;
  icebergOrder?: IcebergOrder;
}

export interface PeggedOrder {
  reference: number;
  offset: string;
}

export interface IcebergOrder {
  peakSize: bigint;
  minimumVisibleSize: bigint;
  reservedRemaining: bigint;
}

/** Every filter of GET /api/v2/orders; absent lists mean "no filter". All combine with AND. */
export interface OrderFilter {
  statuses?: number[];
  types?: number[];
  timeInForces?: number[];
  excludeLiquidity?: boolean;
  /** Lowercase 64-hex ids, or "network". */
  partyIds?: string[];
  /** Lowercase 64-hex ids. */
  marketIds?: string[];
  reference?: string;
  /** Unix ns on createdAt: start inclusive, end exclusive. */
  dateRange?: { start?: bigint; end?: bigint };
  liveOnly?: boolean;
}

/** The position of an order in the listing order: (createdAt, id). */
export interface OrderKey {
  createdAt: bigint;
  id: string;
}

/** The position of one of an order's versions in the listing of its versions. */
export interface OrderVersionKey {
  id: string;
  version: bigint;
}

export const LIVE_STATUSES: readonly number[] = [STATUS.ACTIVE, STATUS.PARKED];
export const LIVE_TYPE = TYPE.LIMIT;
export const NOT_LIVE_TIME_IN_FORCES: readonly number[] = [TIF.IOC, TIF.FOK];

/** A live order rests on the book: ACTIVE or PARKED, LIMIT, and not IOC/FOK. */
export function isLive(o: Pick<Order, 'status' | 'type' | 'timeInForce'>): boolean {
  return (
    LIVE_STATUSES.includes(o.status) &&
    o.type === LIVE_TYPE &&
    !NOT_LIVE_TIME_IN_FORCES.includes(o.timeInForce)
  );
}

/** Order ids are 32 bytes written as 64 hex digits; the store keys orders by those bytes. */
export function isOrderId(id: string): boolean {
  return id.length === 64 && /^[0-9a-fA-F]{64}$/.test(id);
}

/** The party id of the network itself, valid wherever a party id is. */
export const NETWORK_PARTY = 'network';
