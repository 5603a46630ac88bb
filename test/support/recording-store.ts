import type { Block } from '../../src/domain/block.js';
import type { CommittedBlock, WriteStore } from '../../src/store/store.js';

/** A WriteStore that keeps blocks in memory, for testing ingestion rules alone. */
export class RecordingStore implements WriteStore {
  readonly blocks: Block[] = [];
  constructor(private last?: CommittedBlock) {}
  async lastBlock() {
    return this.last;
  }
  readonly commits: number[] = [];
  async writeBlocks(blocks: readonly Block[]) {
    for (const block of blocks) {
      this.blocks.push(block);
      this.last = { height: block.height, time: block.time, chainId: block.chainId };
    }
    this.commits.push(blocks.length);
  }
  async close() {}
}
