/**
 * The enum names the model prints and reads, written out from
 * docs/compatibility.md, section 8, and not imported from src/domain/enums.ts:
 * a wrong name or number there must show as a difference, not be copied here.
 * An array's index is the number.
 */

export const ORDER_STATUS = [
  'STATUS_UNSPECIFIED', 'STATUS_ACTIVE', 'STATUS_EXPIRED', 'STATUS_CANCELLED', 'STATUS_STOPPED', 'STATUS_FILLED',
  'STATUS_REJECTED', 'STATUS_PARTIALLY_FILLED', 'STATUS_PARKED',
] as const;

export const ORDER_TYPE = ['TYPE_UNSPECIFIED', 'TYPE_LIMIT', 'TYPE_MARKET', 'TYPE_NETWORK'] as const;

export const TIME_IN_FORCE = [
  'TIME_IN_FORCE_UNSPECIFIED', 'TIME_IN_FORCE_GTC', 'TIME_IN_FORCE_GTT', 'TIME_IN_FORCE_IOC', 'TIME_IN_FORCE_FOK',
  'TIME_IN_FORCE_GFA', 'TIME_IN_FORCE_GFN',
] as const;

export const SIDE = ['SIDE_UNSPECIFIED', 'SIDE_BUY', 'SIDE_SELL'] as const;

export const PEGGED_REFERENCE = [
  'PEGGED_REFERENCE_UNSPECIFIED', 'PEGGED_REFERENCE_MID', 'PEGGED_REFERENCE_BEST_BID', 'PEGGED_REFERENCE_BEST_ASK',
] as const;

/** OrderError: 38 and 39 are unused, so they have no name. */
export const ORDER_ERROR: readonly (string | undefined)[] = [
  'UNSPECIFIED', 'INVALID_MARKET_ID', 'INVALID_ORDER_ID', 'OUT_OF_SEQUENCE', 'INVALID_REMAINING_SIZE', 'TIME_FAILURE',
  'REMOVAL_FAILURE', 'INVALID_EXPIRATION_DATETIME', 'INVALID_ORDER_REFERENCE', 'EDIT_NOT_ALLOWED', 'AMEND_FAILURE',
  'NOT_FOUND', 'INVALID_PARTY_ID', 'MARKET_CLOSED', 'MARGIN_CHECK_FAILED', 'MISSING_GENERAL_ACCOUNT', 'INTERNAL_ERROR',
  'INVALID_SIZE', 'INVALID_PERSISTENCE', 'INVALID_TYPE', 'SELF_TRADING', 'INSUFFICIENT_FUNDS_TO_PAY_FEES',
  'INCORRECT_MARKET_TYPE', 'INVALID_TIME_IN_FORCE', 'CANNOT_SEND_GFN_ORDER_DURING_AN_AUCTION',
  'CANNOT_SEND_GFA_ORDER_DURING_CONTINUOUS_TRADING', 'CANNOT_AMEND_TO_GTT_WITHOUT_EXPIRYAT', 'EXPIRYAT_BEFORE_CREATEDAT',
  'CANNOT_HAVE_GTC_AND_EXPIRYAT', 'CANNOT_AMEND_TO_FOK_OR_IOC', 'CANNOT_AMEND_TO_GFA_OR_GFN', 'CANNOT_AMEND_FROM_GFA_OR_GFN',
  'CANNOT_SEND_IOC_ORDER_DURING_AUCTION', 'CANNOT_SEND_FOK_ORDER_DURING_AUCTION', 'MUST_BE_LIMIT_ORDER',
  'MUST_BE_GTT_OR_GTC', 'WITHOUT_REFERENCE_PRICE', 'BUY_CANNOT_REFERENCE_BEST_ASK_PRICE', undefined, undefined,
  'OFFSET_MUST_BE_GREATER_OR_EQUAL_TO_ZERO', 'SELL_CANNOT_REFERENCE_BEST_BID_PRICE', 'OFFSET_MUST_BE_GREATER_THAN_ZERO',
  'INSUFFICIENT_ASSET_BALANCE', 'CANNOT_AMEND_PEGGED_ORDER_DETAILS_ON_NON_PEGGED_ORDER', 'UNABLE_TO_REPRICE_PEGGED_ORDER',
  'UNABLE_TO_AMEND_PRICE_ON_PEGGED_ORDER', 'NON_PERSISTENT_ORDER_OUT_OF_PRICE_BOUNDS', 'TOO_MANY_PEGGED_ORDERS',
  'POST_ONLY_ORDER_WOULD_TRADE', 'REDUCE_ONLY_ORDER_WOULD_NOT_REDUCE_POSITION',
].map((name) => (name === undefined ? undefined : `ORDER_ERROR_${name}`));

/** The numbers the model's rules name (section 5.4: live orders). */
export const STATUS_ACTIVE = 1;
export const STATUS_PARKED = 8;
export const TYPE_LIMIT = 1;
export const TIF_IOC = 3;
export const TIF_FOK = 4;

/** Protobuf JSON of an enum: its name, or the bare number when the table has none (section 3). */
export function enumJson(names: readonly (string | undefined)[], n: number): string | number {
  return names[n] ?? n;
}

/** The number of a name, for a test that writes a filter by name. */
export function enumNumber(names: readonly (string | undefined)[], name: string): number {
  const n = names.indexOf(name);
  if (n < 0) throw new RangeError(`no enum value ${name}`);
  return n;
}
