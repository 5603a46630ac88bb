/**
 * The kinds of orders the simulated network's participants send, and the
 * numbers of the network's enums they use (docs/compatibility.md, section 8).
 */
import type { Order } from '../domain/order.js';
import { WeightedChoice } from './random.js';

export const SIDE_BUY = 1;
export const SIDE_SELL = 2;
/** A PeggedOrder message with this reference is no peg at all: the original answers it as none. */
export const PEG_UNSPECIFIED = 0;
export const PEG_MID = 1;
export const PEG_BEST_BID = 2;
export const PEG_BEST_ASK = 3;

/** OrderError numbers the simulator uses (docs/compatibility.md, section 8). */
export const ERR = {
  /** Set explicitly on some orders that have no error, as real cores do. */
  UNSPECIFIED: 0,
  INVALID_EXPIRATION_DATETIME: 7,
  MARGIN_CHECK_FAILED: 14,
  MISSING_GENERAL_ACCOUNT: 15,
  INSUFFICIENT_FUNDS_TO_PAY_FEES: 21,
  CANNOT_SEND_GFN_ORDER_DURING_AN_AUCTION: 24,
  CANNOT_SEND_GFA_ORDER_DURING_CONTINUOUS_TRADING: 25,
  EXPIRYAT_BEFORE_CREATEDAT: 27,
  CANNOT_SEND_IOC_ORDER_DURING_AUCTION: 32,
  CANNOT_SEND_FOK_ORDER_DURING_AUCTION: 33,
  NON_PERSISTENT_ORDER_OUT_OF_PRICE_BOUNDS: 47,
  TOO_MANY_PEGGED_ORDERS: 48,
  INSUFFICIENT_ASSET_BALANCE: 43,
  POST_ONLY_ORDER_WOULD_TRADE: 49,
  REDUCE_ONLY_ORDER_WOULD_NOT_REDUCE_POSITION: 50,
} as const;

/** What kind of order a participant sends. */
export type Intent =
  | 'gtc' | 'gtt' | 'gfn' | 'gfa' | 'ioc' | 'fok' | 'market'
  | 'pegged' | 'liquidity' | 'iceberg' | 'network' | 'invalid';

export const INTENTS = new WeightedChoice<Intent>([
  ['gtc', 40], ['gtt', 12], ['gfn', 4], ['gfa', 1.5], ['ioc', 7], ['fok', 4], ['market', 6],
  ['pegged', 5], ['liquidity', 5], ['iceberg', 4], ['network', 1], ['invalid', 4],
]);

export const INVALID_REASONS = new WeightedChoice<number>([
  [ERR.MARGIN_CHECK_FAILED, 5], [ERR.INSUFFICIENT_ASSET_BALANCE, 3],
  [ERR.INSUFFICIENT_FUNDS_TO_PAY_FEES, 2], [ERR.MISSING_GENERAL_ACCOUNT, 1],
  [ERR.POST_ONLY_ORDER_WOULD_TRADE, 2], [ERR.EXPIRYAT_BEFORE_CREATEDAT, 1],
  [ERR.INVALID_EXPIRATION_DATETIME, 1], [ERR.TOO_MANY_PEGGED_ORDERS, 1],
]);


/** A pegged order: one whose PeggedOrder names a reference (an unspecified one pegs nothing). */
export function isPegged(o: Order): boolean {
  return o.peggedOrder !== undefined && o.peggedOrder.reference !== PEG_UNSPECIFIED;
}
