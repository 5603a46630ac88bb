/**
 * A page request after parsing: `first` rows after a cursor, or `last` rows
 * before one, in the listing order chosen by newestFirst.
 */
export interface PageRequest<K> {
  newestFirst: boolean;
  /** 'first' walks forward from `cursor` (exclusive); 'last' walks backward. */
  mode: 'first' | 'last';
  limit: number;
  cursor?: K;
}

/** One row of a page: the node already encoded as JSON, and its listing key. */
export interface PageRow<K> {
  json: string;
  key: K;
}

/** A stored block as answers name it: its height and time (Unix ns). */
export interface BlockStamp {
  height: bigint;
  time: bigint;
}

/**
 * A block as a value to compare: `height:time`, or '' before any block. What
 * is kept per block (answers, the planner's counts) is dropped when the token
 * of the store's last block changes.
 */
export function blockToken(block: BlockStamp | undefined): string {
  return block === undefined ? '' : `${block.height}:${block.time}`;
}

/**
 * A page in presentation order (a 'last' page comes in the same order as a
 * forward page), with exact neighbours: is there a matching row beyond each end?
 */
export interface Page<K> {
  rows: PageRow<K>[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  /**
   * The last block stored in the snapshot the page was read from (absent
   * before any block): answers name it in their block headers.
   */
  lastBlock?: BlockStamp;
}

export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 5000;
