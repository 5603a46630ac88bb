/**
 * The newest block this server has seen its store name, for the answers
 * that cannot wait for the store: a refusal of Node's HTTP parser is written
 * on the socket at once, and a client over its rate limit is not worth a
 * read. Both still carry the block headers, as every other answer does;
 * the block may be one older than the store's, never one it has not stored.
 */
import type { BlockStamp } from '../domain/page.js';
import type { CommittedBlock, QueryStore } from '../store/store.js';
import { blockHeaderList, type HeaderList } from './answer-headers.js';

export class KnownBlock {
  /** undefined: no block stored; null: the store has not been asked yet. */
  private block: BlockStamp | undefined | null = null;
  /** The block headers of `block`, made when it changes. */
  private blockHeaders: HeaderList = [];

  /** `store`, telling this of every block its reads name. */
  watch(store: QueryStore): QueryStore {
    const seen = <T extends { lastBlock?: BlockStamp | undefined }>(page: T): T => {
      this.saw(page.lastBlock);
      return page;
    };
    return {
      listOrders: (filter, page) => store.listOrders(filter, page).then(seen),
      listBundles: (filter, page) => store.listBundles(filter, page).then(seen),
      listRemovedBundles: (filter, page) => store.listRemovedBundles(filter, page).then(seen),
      getOrder: (id, version) => store.getOrder(id, version).then(seen),
      listOrderVersions: (id, page) => store.listOrderVersions(id, page).then(seen),
      orderChanges: (after, upTo, maxBlocks) => store.orderChanges(after, upTo, maxBlocks),
      firstChangeHeight: () => store.firstChangeHeight(),
      watchBlocks: (onBlock) => store.watchBlocks(onBlock),
      lastBlock: () => store.lastBlock().then((block: CommittedBlock | undefined) => {
        this.saw(block);
        return block;
      }),
      lastBlockSync: store.lastBlockSync && (() => {
        const block = store.lastBlockSync!();
        this.saw(block);
        return block;
      }),
      close: () => store.close(),
    };
  }

  /** The newest block seen; undefined if none is stored, or the store was never read. */
  latest(): BlockStamp | undefined {
    return this.block ?? undefined;
  }

  /** The block headers, or none before the store was first read. */
  headers(): HeaderList {
    return this.blockHeaders;
  }

  private saw(block: BlockStamp | undefined): void {
    const known = this.block;
    // Reads finish out of order: keep the newest. The same block again (most reads) changes nothing.
    if (known !== null && known !== undefined && (block === undefined || block.height < known.height)) return;
    if (known !== null && known !== undefined && block !== undefined && block.height === known.height && block.time === known.time) return;
    this.block = block === undefined ? known ?? undefined : { height: block.height, time: block.time };
    this.blockHeaders = blockHeaderList(this.block);
  }
}
