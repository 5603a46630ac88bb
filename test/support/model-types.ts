/**
 * What the model reads of the events: the fields docs/compatibility.md,
 * section 9.5, lists, as plain values. Declared here rather than imported
 * from src/domain, so that the model shares nothing with the code it checks;
 * they have the domain's shapes, so a test may hand the model the domain
 * blocks it built (src's Block is one of these with more fields).
 */

/** One state of an order, as an Order event carries it; enums are numbers. */
export interface ModelOrder {
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
  /** Present only when the event set it (the field is `optional`). */
  reason?: number;
  updatedAt: bigint;
  version: bigint;
  batchId: bigint;
  peggedOrder?: { reference: number; offset: string };
  liquidityProvisionId: string;
  postOnly: boolean;
  reduceOnly: boolean;
  icebergOrder?: { peakSize: bigint; minimumVisibleSize: bigint; reservedRemaining: bigint };
}

export interface ModelSignerAdded {
  signatureId: string;
  validatorId: string;
  timestamp: bigint;
  newSigner: string;
  submitter: string;
  nonce: string;
  epochSeq: bigint;
}

export interface ModelSignerRemoved {
  signatureSubmitters: { signatureId: string; submitter: string }[];
  validatorId: string;
  timestamp: bigint;
  oldSigner: string;
  nonce: string;
  epochSeq: bigint;
}

export interface ModelNodeSignature {
  id: string;
  sig: Uint8Array;
  kind: number;
}

/** Every event of one height, BeginBlock to EndBlock, in event order (section 9.6). */
export interface ModelBlock {
  height: bigint;
  /** Unix ns, from BeginBlock. */
  time: bigint;
  hash: string;
  chainId: string;
  orders: ModelOrder[];
  nodeSignatures: ModelNodeSignature[];
  signersAdded: ModelSignerAdded[];
  signersRemoved: ModelSignerRemoved[];
}

/** A block as answers name it, and the store's last block. */
export interface ModelBlockStamp {
  height: bigint;
  time: bigint;
  chainId: string;
  hash: string;
}

/** The filters of GET /api/v2/orders (section 2.2); an absent one matches everything. */
export interface ModelOrderFilter {
  statuses?: number[];
  types?: number[];
  timeInForces?: number[];
  excludeLiquidity?: boolean;
  partyIds?: string[];
  marketIds?: string[];
  reference?: string;
  dateRange?: { start?: bigint; end?: bigint };
  liveOnly?: boolean;
}

/** The filters of the bundle listings (section 2.3). */
export interface ModelBundleFilter {
  nodeId?: string;
  submitter?: string;
  epochSeq?: bigint;
}

/** Where a row lies in the order listing: its createdAt (whole microseconds) and lower-case id. */
export interface ModelOrderKey {
  createdAt: bigint;
  id: string;
}

export interface ModelBundleKey {
  timestamp: bigint;
  signatureId: string;
}

export interface ModelVersionKey {
  id: string;
  version: bigint;
}

/** One row of a listing: its node's JSON text and its place in the listing. */
export interface ModelRow<K> {
  json: string;
  key: K;
}

/** A page asked for: `limit` rows after `cursor` ('first') or before it ('last'), in the chosen order. */
export interface ModelPageRequest<K> {
  newestFirst: boolean;
  mode: 'first' | 'last';
  limit: number;
  cursor?: K;
}

export interface ModelPage<K> {
  rows: ModelRow<K>[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}
