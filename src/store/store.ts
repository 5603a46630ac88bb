/**
 * The storage contract. Each backend (./sqlite/, ./postgres/) implements it;
 * the API, ingestion and tests see nothing else. Queries and writes are two
 * doors: a QueryStore answers pages (any number per store, in any process),
 * a WriteStore stores blocks (one per store, on a thread of its own). ./open.ts
 * picks the backend.
 */
import type { Block } from '../domain/block.js';
import type { BundleFilter, BundleKey } from '../domain/bundle.js';
import type { OrderFilter, OrderKey, OrderVersionKey } from '../domain/order.js';
import type { BlockChanges } from '../domain/order-stream.js';
import type { BlockStamp, Page, PageRequest } from '../domain/page.js';
import type { Retention, RetentionStatus } from '../domain/retention.js';

/** Which store: the embedded one in a folder, or a PostgreSQL database. */
export interface StoreConfig {
  /** Folder of the embedded database; unused when databaseUrl is given. */
  dataDir: string;
  /** A postgres:// URL: the store is that PostgreSQL database. */
  databaseUrl?: string | undefined;
}

/** Where a store says what it met and handled on its own (a lost session it opened again, say). */
export type StoreLog = (level: 'info' | 'warn', message: string) => void;

export interface OpenOptions {
  /**
   * Open for queries only: never migrate. With PostgreSQL the role may have
   * SELECT rights only, and the database may be a read replica; the schema
   * must be at this version already.
   */
  readOnly?: boolean;
  /**
   * PostgreSQL cancels a query running longer than this (and one waiting as
   * long for a connection); 0 or absent: never. SQLite runs a query to its
   * end on the caller's thread, which nothing can cut short.
   */
  queryTimeoutMs?: number | undefined;
  /** Where the store logs; nowhere if absent. */
  log?: StoreLog | undefined;
}

export interface WriterOptions {
  /**
   * With PostgreSQL, one instance writes at a time (an advisory lock elects
   * it). Without `wait`, opening fails while another instance holds the lock;
   * with it, opening waits until the lock is free (a standby), calling
   * onStandby once if it has to wait, until signal aborts.
   */
  wait?: boolean;
  signal?: AbortSignal;
  onStandby?: () => void;
  /**
   * What the writer keeps (docs/compatibility.md, section 13): archive (the
   * default) prunes nothing; a window is pruned by the writer, between groups.
   */
  retention?: Retention;
  /**
   * Told what an operator should know that stops nothing: a store pruned
   * before with a shorter window than `retention` (what that pruned is gone),
   * a long migration's progress.
   */
  onNotice?: (message: string) => void;
  /**
   * Told of each prune batch that pruned something: its rows, its
   * milliseconds, commit included, and the milliseconds of CPU the writer
   * thread spent on it (PostgreSQL's work is the server's, not counted).
   */
  onPruned?: (rows: number, ms: number, cpuMs: number) => void;
}

/** The newest block committed, stored in the same transaction as its rows. */
export interface CommittedBlock {
  height: bigint;
  /** Unix ns. */
  time: bigint;
  chainId: string;
  /** The block hash as the BeginBlock event gives it (lowercase hex); '' when unknown. */
  hash: string;
}

/** What is kept of each stored block to tell whether a block read again is the same one. */
export interface StoredBlock {
  /** As CommittedBlock's. */
  hash: string;
  /** ../domain/block-digest.ts; '' for a block stored before digests were kept. */
  digest: string;
}

export interface QueryStore {
  /** Current state of each order matching the filter, one page, with the last block of the snapshot it read. */
  listOrders(filter: OrderFilter, page: PageRequest<OrderKey>): Promise<Page<OrderKey>>;
  /** Signer-added bundles matching the filter, one page, with the last block of the snapshot it read. */
  listBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>>;
  /** Signer-removed bundles matching the filter, one per signature submitter, one page, as listBundles. */
  listRemovedBundles(filter: BundleFilter, page: PageRequest<BundleKey>): Promise<Page<BundleKey>>;
  /**
   * One order's node (the list's JSON): its current state, or with `version`
   * the last state of that version; undefined when there is none. With the
   * last block of the snapshot it was read in.
   */
  getOrder(id: string, version?: bigint): Promise<{ node: string | undefined; lastBlock?: BlockStamp }>;
  /** One order's versions, each in its last state, one page (newest first: highest version first). */
  listOrderVersions(id: string, page: PageRequest<OrderVersionKey>): Promise<Page<OrderVersionKey>>;
  /**
   * The order states each block after `after` and up to `upTo` stored, in
   * height order, as the stream's updates send them; blocks that changed no
   * order are left out, and at most `maxBlocks` blocks are read.
   */
  orderChanges(after: bigint, upTo: bigint, maxBlocks: number): Promise<BlockChanges[]>;
  /** The lowest height whose changes orderChanges can give (the first block stored; 1 before any). */
  firstChangeHeight(): Promise<bigint>;
  /**
   * Calls `onBlock` whenever a block may have been committed (by this
   * process's writer thread or any other instance's); returns the stop
   * function. The caller reads what changed.
   */
  watchBlocks(onBlock: () => void): () => void;
  lastBlock(): Promise<CommittedBlock | undefined>;
  /** What the store keeps and has pruned (the writer's retention as last stored), and its size; absent for a stand-in. */
  retentionStatus?(): Promise<RetentionStatus>;
  /** The same without waiting, where the backend reads synchronously (the embedded store); absent elsewhere. */
  lastBlockSync?(): CommittedBlock | undefined;
  /** The connections of the store's pool, for the metrics; absent for a store without one. */
  connections?(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/**
 * The blocks of one transaction, added as they complete. A store may turn
 * each block into its rows as it is added: decoded blocks kept until their
 * group is written were most of ingestion's garbage-collection work.
 */
export interface BlockGroup {
  /** Adds the next block; a block that cannot be stored throws and leaves the group as it was. */
  add(block: Block): void;
}

export interface WriteStore<B extends BlockGroup = BlockGroup> {
  lastBlock(): Promise<CommittedBlock | undefined>;
  /**
   * The hash and digest of each stored block with a height from `from` to
   * `to` (inclusive), by height; a block stored without a hash (by a version
   * before either backend kept them) is left out. Ingestion compares a block
   * it skips with the stored one.
   */
  storedBlocks(from: bigint, to: bigint): Promise<Map<bigint, StoredBlock>>;
  /** An empty group, to fill and hand to write(). */
  newGroup(): B;
  /**
   * Stores the group's blocks in one transaction, together with the height of
   * the last as the last committed block: readers see all of them or none.
   * Each block must be newer than the one before it and than lastBlock().
   * Calls may overlap (ingestion hands over the next group while one is being
   * written): they are written in call order, and a call made while an
   * earlier one is outstanding fails, writing nothing, if that one fails; a
   * call made once the failure was reported is written as usual. A group is
   * written once.
   */
  write(group: B): Promise<void>;
  /**
   * Resolves once nothing older than the retention's window at the last
   * block is answered any more (at once under archive). The writer prunes
   * between groups on its own; ingestion calls this before it ends.
   */
  prune(): Promise<void>;
  close(): Promise<void>;
}

/** Writes blocks as one group. */
export async function writeBlocks<B extends BlockGroup>(store: WriteStore<B>, blocks: readonly Block[]): Promise<void> {
  const group = store.newGroup();
  for (const block of blocks) group.add(block);
  await store.write(group);
}
