/**
 * The QueryStore methods a test's stand-in store does not serve: the reads
 * beside the listings reject, saying so, and nothing is ever committed.
 */
import type { QueryStore } from '../../src/store/store.js';

const unserved = (what: string) => () => Promise.reject(new Error(`this test's store does not serve ${what}`));

export const WITHOUT_COMPANIONS: Pick<
  QueryStore, 'listRemovedBundles' | 'getOrder' | 'listOrderVersions' | 'orderChanges' | 'firstChangeHeight' | 'watchBlocks'
> = {
  listRemovedBundles: unserved('removed bundles'),
  getOrder: unserved('one order'),
  listOrderVersions: unserved('order versions'),
  orderChanges: unserved('order changes'),
  firstChangeHeight: unserved('the first block'),
  watchBlocks: () => () => undefined,
};
