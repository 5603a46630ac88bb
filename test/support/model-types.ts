/**
 * What the model reads of the events (docs/compatibility.md, section 9.5),
 * and what it answers: plain values. A block here has no Order messages, so
 * a test may hand the model the domain blocks it built (src's Block is one
 * of these with more fields).
 */
import type { BundleFilter, NodeSignature, SignerAdded, SignerRemoved } from '../../src/domain/bundle.js';
import type { Order, OrderFilter } from '../../src/domain/order.js';

/**
 * What one event carries: the domain's shapes, as types only (erased at run
 * time: no code of src/ runs in the model). The model fills them from its
 * own decoding (model-protobuf.ts).
 */
export type ModelOrder = Order;
export type ModelSignerAdded = SignerAdded;
export type ModelSignerRemoved = SignerRemoved;
export type ModelNodeSignature = NodeSignature;

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

/** The filters of GET /api/v2/orders (section 2.2) and of the bundle listings (section 2.3), as the domain has them. */
export type ModelOrderFilter = OrderFilter;
export type ModelBundleFilter = BundleFilter;

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
