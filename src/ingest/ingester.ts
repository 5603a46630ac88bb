import type { Block } from '../domain/block.js';
import type { CommittedBlock, WriteStore } from '../store/store.js';
import { BlockAssembler, BlockSequenceError } from './assembler.js';
import { IngestError } from './errors.js';
import { SourceError, type EventSource } from './source.js';

export interface IngestOptions {
  /** Accept a jump in block height instead of stopping (data would be missing). */
  allowGaps?: boolean;
  /** Called after each committed block (progress, status); position is the offset of its EndBlock. */
  onBlock?: (block: Block, stats: IngestStats, position: number) => void;
}

export interface IngestStats {
  source: string;
  events: number;
  blocksCommitted: number;
  /** Blocks at or below the last committed height: stored before, skipped now. */
  blocksAlreadyStored: number;
  /** Events outside any block, and of types not stored, by BusEventType number. */
  eventsOutsideBlock: number;
  skippedByType: Record<string, number>;
  lastBlock: CommittedBlock | undefined;
}

/**
 * Reads a source to its end (or until `signal` aborts), storing each complete
 * block exactly once: blocks at or below the store's last committed height are
 * skipped, a gap in heights or a different chain id stops ingestion.
 */
export async function ingest(
  source: EventSource,
  store: WriteStore,
  opts: IngestOptions = {},
  signal?: AbortSignal,
): Promise<IngestStats> {
  const assembler = new BlockAssembler();
  let last = await store.lastBlock();
  const stats: IngestStats = {
    source: source.name, events: 0, blocksCommitted: 0, blocksAlreadyStored: 0,
    eventsOutsideBlock: 0, skippedByType: {}, lastBlock: last,
  };
  const fail = (reason: string, offset: number): never => {
    throw new IngestError(reason, { source: source.name, offset, unit: source.unit }, assembler.openHeight);
  };

  try {
    for await (const batch of source.events()) {
      if (batch.restart) assembler.discardOpenBlock();
      for (const { event, offset } of batch.events) {
        stats.events++;
        let block: Block | undefined;
        try {
          block = assembler.push(event);
        } catch (e) {
          if (e instanceof BlockSequenceError) fail(e.message, offset);
          throw e;
        }
        if (!block) continue;
        if (last && block.chainId !== last.chainId) {
          fail(`block ${block.height} is of chain "${block.chainId}", the store holds chain "${last.chainId}"`, offset);
        }
        if (last && block.height <= last.height) {
          stats.blocksAlreadyStored++;
          continue;
        }
        if (last && block.height !== last.height + 1n && !opts.allowGaps) {
          fail(`block ${block.height} follows stored block ${last.height}: blocks ${last.height + 1n}..${block.height - 1n} are missing (use --allow-gaps to accept)`, offset);
        }
        await store.writeBlock(block);
        last = { height: block.height, time: block.time, chainId: block.chainId };
        stats.blocksCommitted++;
        stats.lastBlock = last;
        opts.onBlock?.(block, snapshotCounts(stats, assembler), offset);
      }
      if (signal?.aborted) break;
    }
  } catch (e) {
    if (e instanceof SourceError) fail(e.message, e.offset);
    throw e;
  }
  return snapshotCounts(stats, assembler);
}

function snapshotCounts(stats: IngestStats, assembler: BlockAssembler): IngestStats {
  stats.eventsOutsideBlock = assembler.counts.outsideBlock;
  stats.skippedByType = Object.fromEntries(assembler.counts.skippedByType);
  return stats;
}
