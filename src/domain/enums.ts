/**
 * The network's enums, name <-> number. This is the only place their names are
 * written; the protobuf schema carries them as plain varints.
 */

export interface EnumTable {
  /** Protobuf type name, for error messages (e.g. "Order.Status"). */
  readonly typeName: string;
  /** names[n] is the name of number n, or undefined for an unused number. */
  readonly names: readonly (string | undefined)[];
}

function table(typeName: string, names: readonly (string | undefined)[]): EnumTable {
  return { typeName, names };
}

export const OrderStatus = table('Order.Status', [
  'STATUS_UNSPECIFIED',
  'STATUS_ACTIVE',
  'STATUS_EXPIRED',
  'STATUS_CANCELLED',
  'STATUS_STOPPED',
  'STATUS_FILLED',
  'STATUS_REJECTED',
  'STATUS_PARTIALLY_FILLED',
  'STATUS_PARKED',
]);

export const OrderType = table('Order.Type', [
  'TYPE_UNSPECIFIED',
  'TYPE_LIMIT',
  'TYPE_MARKET',
  'TYPE_NETWORK',
]);

export const TimeInForce = table('Order.TimeInForce', [
  'TIME_IN_FORCE_UNSPECIFIED',
  'TIME_IN_FORCE_GTC',
  'TIME_IN_FORCE_GTT',
  'TIME_IN_FORCE_IOC',
  'TIME_IN_FORCE_FOK',
  'TIME_IN_FORCE_GFA',
  'TIME_IN_FORCE_GFN',
]);

export const Side = table('Side', ['SIDE_UNSPECIFIED', 'SIDE_BUY', 'SIDE_SELL']);

export const PeggedReference = table('PeggedReference', [
  'PEGGED_REFERENCE_UNSPECIFIED',
  'PEGGED_REFERENCE_MID',
  'PEGGED_REFERENCE_BEST_BID',
  'PEGGED_REFERENCE_BEST_ASK',
]);

const orderErrorSuffixes: (string | undefined)[] = [
  'UNSPECIFIED', 'INVALID_MARKET_ID', 'INVALID_ORDER_ID', 'OUT_OF_SEQUENCE',
  'INVALID_REMAINING_SIZE', 'TIME_FAILURE', 'REMOVAL_FAILURE',
  'INVALID_EXPIRATION_DATETIME', 'INVALID_ORDER_REFERENCE', 'EDIT_NOT_ALLOWED',
  'AMEND_FAILURE', 'NOT_FOUND', 'INVALID_PARTY_ID', 'MARKET_CLOSED',
  'MARGIN_CHECK_FAILED', 'MISSING_GENERAL_ACCOUNT', 'INTERNAL_ERROR',
  'INVALID_SIZE', 'INVALID_PERSISTENCE', 'INVALID_TYPE', 'SELF_TRADING',
  'INSUFFICIENT_FUNDS_TO_PAY_FEES', 'INCORRECT_MARKET_TYPE',
  'INVALID_TIME_IN_FORCE', 'CANNOT_SEND_GFN_ORDER_DURING_AN_AUCTION',
  'CANNOT_SEND_GFA_ORDER_DURING_CONTINUOUS_TRADING',
  'CANNOT_AMEND_TO_GTT_WITHOUT_EXPIRYAT', 'EXPIRYAT_BEFORE_CREATEDAT',
  'CANNOT_HAVE_GTC_AND_EXPIRYAT', 'CANNOT_AMEND_TO_FOK_OR_IOC',
  'CANNOT_AMEND_TO_GFA_OR_GFN', 'CANNOT_AMEND_FROM_GFA_OR_GFN',
  'CANNOT_SEND_IOC_ORDER_DURING_AUCTION', 'CANNOT_SEND_FOK_ORDER_DURING_AUCTION',
  'MUST_BE_LIMIT_ORDER', 'MUST_BE_GTT_OR_GTC', 'WITHOUT_REFERENCE_PRICE',
  'BUY_CANNOT_REFERENCE_BEST_ASK_PRICE', undefined, undefined,
  'OFFSET_MUST_BE_GREATER_OR_EQUAL_TO_ZERO', 'SELL_CANNOT_REFERENCE_BEST_BID_PRICE',
  'OFFSET_MUST_BE_GREATER_THAN_ZERO', 'INSUFFICIENT_ASSET_BALANCE',
  'CANNOT_AMEND_PEGGED_ORDER_DETAILS_ON_NON_PEGGED_ORDER',
  'UNABLE_TO_REPRICE_PEGGED_ORDER', 'UNABLE_TO_AMEND_PRICE_ON_PEGGED_ORDER',
  'NON_PERSISTENT_ORDER_OUT_OF_PRICE_BOUNDS', 'TOO_MANY_PEGGED_ORDERS',
  'POST_ONLY_ORDER_WOULD_TRADE', 'REDUCE_ONLY_ORDER_WOULD_NOT_REDUCE_POSITION',
];
export const OrderError = table(
  'OrderError',
  orderErrorSuffixes.map((s) => (s === undefined ? undefined : `ORDER_ERROR_${s}`)),
);

export const NodeSignatureKind = table('NodeSignatureKind', [
  'NODE_SIGNATURE_KIND_UNSPECIFIED',
  'NODE_SIGNATURE_KIND_ASSET_NEW',
  'NODE_SIGNATURE_KIND_ASSET_WITHDRAWAL',
  'NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_ADDED',
  'NODE_SIGNATURE_KIND_ERC20_MULTISIG_SIGNER_REMOVED',
  'NODE_SIGNATURE_KIND_ASSET_UPDATE',
]);

/** Named numbers used by the query rules (live orders, filters, simulator). */
export const STATUS = {
  UNSPECIFIED: 0, ACTIVE: 1, EXPIRED: 2, CANCELLED: 3, STOPPED: 4,
  FILLED: 5, REJECTED: 6, PARTIALLY_FILLED: 7, PARKED: 8,
} as const;
export const TYPE = { UNSPECIFIED: 0, LIMIT: 1, MARKET: 2, NETWORK: 3 } as const;
export const TIF = { UNSPECIFIED: 0, GTC: 1, GTT: 2, IOC: 3, FOK: 4, GFA: 5, GFN: 6 } as const;

/** The name of `n`, or the decimal number itself for a number the table does not know. */
export function enumName(t: EnumTable, n: number): string {
  return t.names[n] ?? String(n);
}

/**
 * Parses an enum value as clients send it: the full name, or its number.
 * Returns undefined for anything else.
 */
export function parseEnum(t: EnumTable, text: string): number | undefined {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return t.names[n] === undefined ? undefined : n;
  }
  const n = t.names.indexOf(text);
  return n < 0 ? undefined : n;
}
