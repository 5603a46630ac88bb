/**
 * The storage contract. Each backend (sqlite.ts, postgres.ts, ...) implements
 * it; the API, ingestion and tests see nothing else.
 */
import type { Block } from '../domain/block.js';
import type { BundleFilter, BundleKey } from '../domain/bundle.js';
import type { OrderFilter, OrderKey } from '../domain/order.js';
import type { Page, PageRequest } from '../domain/page.js';

/** The newest block committed, stored in the same transaction as its rows. */
export interface CommittedBlock {
  height: bigint;
  /** Unix ns. */
  time: bigint;
  chainId: string;
}

export interface QueryStore {
  /** Current state of each order matching the filter, one page. */
  listOrders(filter: OrderFilter, page: PageRequest<OrderKey>): Promise<Page<OrderKey>>;
  /** Signer-added bundles matching the filter, one page. */
  listBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>>;
  lastBlock(): Promise<CommittedBlock | undefined>;
  close(): Promise<void>;
}

export interface WriteStore {
  lastBlock(): Promise<CommittedBlock | undefined>;
  /**
   * Stores consecutive blocks in one transaction, together with the height of
   * the last as the last committed block: readers see all of them or none.
   * Each block must be newer than the one before it and than lastBlock().
   * Calls may overlap (ingestion hands over the next group while one is being
   * written): they are written in call order, and a call made while an earlier
   * one is outstanding must fail, writing nothing, if that one fails.
   */
  writeBlocks(blocks: readonly Block[]): Promise<void>;
  close(): Promise<void>;
}

export type Store = QueryStore & WriteStore;
