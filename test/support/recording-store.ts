import type { Block } from '../../src/domain/block.js';
import { blockDigest } from '../../src/domain/block-digest.js';
import type { BlockGroup, CommittedBlock, WriteStore } from '../../src/store/store.js';

/** A group that keeps its blocks as they are. */
export class BlockList implements BlockGroup {
  readonly blocks: Block[] = [];
  add(block: Block) {
    this.blocks.push(block);
  }
}

/** A WriteStore that keeps blocks in memory, for testing ingestion rules alone. */
export class RecordingStore implements WriteStore<BlockList> {
  readonly blocks: Block[] = [];
  constructor(private last?: CommittedBlock) {}
  async lastBlock() {
    return this.last;
  }
  /** Each block's hash and digest, as the stores keep them (src/store/rows.ts). */
  async storedBlocks(from: bigint, to: bigint) {
    const kept = this.blocks.filter((b) => b.height >= from && b.height <= to && b.hash !== '');
    return new Map(kept.map((b) => [b.height, { hash: b.hash, digest: blockDigest(b) }]));
  }
  readonly commits: number[] = [];
  private waiting: { blocks: number; resolve: () => void }[] = [];
  newGroup() {
    return new BlockList();
  }
  async write({ blocks }: BlockList) {
    for (const block of blocks) {
      this.blocks.push(block);
      this.last = { height: block.height, time: block.time, chainId: block.chainId, hash: block.hash };
    }
    this.commits.push(blocks.length);
    this.waiting = this.waiting.filter((w) => (this.blocks.length >= w.blocks ? w.resolve() : true));
  }
  /** Resolves once `n` blocks are written: a test waits on the write itself, not on time. */
  written(n: number): Promise<void> {
    if (this.blocks.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ blocks: n, resolve }));
  }
  /** Keeps everything, as an archive store. */
  async prune() {}
  async close() {}
}
