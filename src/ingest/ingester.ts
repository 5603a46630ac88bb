import type { Block } from '../domain/block.js';
import { blockDigest } from '../domain/block-digest.js';
import { CorruptInputError, IngestError, StoredBlockMismatchError } from '../errors.js';
import type { BlockGroup, CommittedBlock, WriteStore } from '../store/store.js';
import { BlockAssembler } from './assembler.js';
import { PendingGroup, DEFAULT_COMMIT_LIMITS, type CommitLimits } from './pending-group.js';
import type { EventSource, OffsetUnit, EventBatch } from './source.js';
import { heightRanges, StoredBlocks } from './stored-blocks.js';

export interface IngestOptions {
  /** Accept a jump in block height instead of stopping (data would be missing). */
  allowGaps?: boolean;
  /** How completed blocks are grouped into transactions. */
  commit?: Partial<CommitLimits>;
  /** Called after each committed block (progress, status); position is the offset of its EndBlock. */
  onBlock?: (block: CommittedBlock, stats: IngestStats, position: number) => void;
  /** Something an operator should know that does not stop ingestion (a height seen again with another hash). */
  onWarning?: (message: string) => void;
  /** The clock the commit delay is measured by (ms); a test sets its own. */
  now?: () => number;
}

export interface IngestStats {
  source: string;
  events: number;
  blocksCommitted: number;
  /** Blocks at or below the last committed height: stored before, skipped now. */
  blocksAlreadyStored: number;
  /** Of those, blocks whose hash differs from the stored block of their height (a restarted chain). */
  blocksWithOtherHash: number;
  /**
   * Of those, blocks with the stored block's hash but other events (its
   * digest differs): ingestion writes nothing more and ends with
   * StoredBlockMismatchError.
   */
  blocksWithOtherContent: number;
  /** Events outside any block, and of types not stored, by BusEventType number. */
  eventsOutsideBlock: number;
  skippedByType: Record<string, number>;
  lastBlock: CommittedBlock | undefined;
  /** The newest height read from the source beyond the stored ones: stored, or waiting to be (the lag's other end). */
  heightRead?: bigint;
  /**
   * The source ended inside a block, which is not stored: its height (unknown
   * when its BeginBlock was cut off) and the offset where it starts.
   */
  incompleteBlock?: { height?: bigint; offset: number };
}

/** One line for an operator: the source ended inside a block, which is not stored. */
export function incompleteBlockMessage(stats: IngestStats, unit: OffsetUnit): string | undefined {
  const block = stats.incompleteBlock;
  if (block === undefined) return undefined;
  const which = block.height === undefined ? 'a block whose BeginBlock is cut off' : `block ${block.height}`;
  return `${stats.source} ends inside ${which} (from ${unit} offset ${block.offset}): that block is incomplete and was not stored`;
}

const TIMED_OUT = Symbol('timed out');

/**
 * Once a block read again turned out to differ from the stored one, a source
 * that delivers nothing for this long is taken to have replayed all it had
 * (a --follow file read to its end, a core that resent its backlog): far
 * longer than a source with data ready takes for a read (~10 ms for a 1 MiB
 * chunk, see CommitLimits.idleMs).
 */
const MISMATCH_IDLE_MS = 1000;

/** The promise's value, or TIMED_OUT if it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const ABORTED = Symbol('aborted');

/** `promise`, unless `signal` aborts first: a source with nothing to read (an idle pipe) must not hold up a stop. */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (signal === undefined) return promise;
  if (signal.aborted) return ABORTED;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}

/**
 * Reads a source to its end (or until `signal` aborts), storing each complete
 * block exactly once: blocks at or below the store's last committed height are
 * skipped, a gap in heights or a different chain id stops ingestion. Complete
 * blocks are committed in groups (see CommitLimits); when ingestion stops for
 * any reason but a failing store, every complete block read so far is
 * committed first. A skipped block with the stored block's hash but other
 * events (../domain/block-digest.ts) means the store or the source is
 * corrupt: from then on nothing is written, the blocks the store holds are
 * read on to name every such height, and ingestion ends with
 * StoredBlockMismatchError at the first block the store does not hold, at
 * the source's end, or once the source is idle (MISMATCH_IDLE_MS).
 */
export async function ingest<B extends BlockGroup>(
  source: EventSource,
  store: WriteStore<B>,
  opts: IngestOptions = {},
  signal?: AbortSignal,
): Promise<IngestStats> {
  const assembler = new BlockAssembler();
  const pending = new PendingGroup(() => store.newGroup(), { ...DEFAULT_COMMIT_LIMITS, ...opts.commit }, opts.now);
  // The newest block accepted: committed, or waiting in the pending group.
  let last = await store.lastBlock();
  const stats: IngestStats = {
    source: source.name, events: 0, blocksCommitted: 0, blocksAlreadyStored: 0, blocksWithOtherHash: 0,
    blocksWithOtherContent: 0, eventsOutsideBlock: 0, skippedByType: {}, lastBlock: last,
  };
  const storedBlocks = new StoredBlocks((from, to) => store.storedBlocks(from, to));
  /** Heights of blocks read again whose events differ from the stored ones': once there is one, nothing more is written. */
  const mismatched: bigint[] = [];
  /** The highest stored height compared so far. */
  let comparedThrough = 0n;

  // A store may write on a thread of its own: while it writes one group, the
  // next waits in its queue and a third is read. Never more, so a slow store
  // slows the source down and memory stays bounded.
  const writes: Promise<void>[] = [];
  let writeFailure: { error: unknown } | undefined;
  /** Waits until at most `atMost` writes are outstanding, and rethrows a failed one. */
  const written = async (atMost = 0) => {
    while (writes.length > atMost) await writes.shift();
    if (writeFailure) throw writeFailure.error;
  };
  /** Hands the group to the store once at most one write is outstanding. */
  const commit = async () => {
    await written(1);
    if (pending.size === 0) return;
    const { group, blocks, positions } = pending.take();
    writes.push(store.write(group).then(
      () => blocks.forEach((block, i) => {
        stats.blocksCommitted++;
        stats.lastBlock = block;
        opts.onBlock?.(block, snapshotCounts(stats, assembler), positions[i]!);
      }),
      (error: unknown) => {
        writeFailure ??= { error };
      },
    ));
  };
  /**
   * Ends ingestion once blocks read again differ from the stored ones,
   * naming them; `after` says why reading stopped before the source ended
   * or passed the stored blocks, if it did.
   */
  const mismatch = (after?: string): StoredBlockMismatchError => {
    const n = mismatched.length;
    return new StoredBlockMismatchError(
      `${n === 1 ? 'block' : 'blocks'} ${heightRanges(mismatched)} ${n === 1 ? 'is' : 'are'} stored with other content ` +
        `than ${source.name} holds (the same ${n === 1 ? 'height and hash' : 'heights and hashes'}, other events); ` +
        `nothing more was written${after === undefined ? '' : `, and blocks after ${comparedThrough} were not compared: ${after}`}. ` +
        'A store is not repaired in place: rebuild it from a good source into a new one (README: "Rebuilding a store")',
    );
  };

  /** Stops at the last complete block: those read before the fault are stored. */
  const fail = async (reason: string, offset: number): Promise<never> => {
    await commit();
    await written();
    const stopped = IngestError.at(reason, { source: source.name, offset, unit: source.unit }, assembler.openHeight);
    throw mismatched.length > 0 ? mismatch(stopped.message) : stopped;
  };

  /**
   * A block seen again is skipped, but if the stored block of its height has
   * another hash, it is not the same block: the chain was restarted (the real
   * network's own recording holds height 1 twice). Worth a warning, not a
   * stop. The same hash with other events (another digest) is the same block
   * with other content: the store or the source is corrupt.
   */
  const compareWithStored = async (block: Block, newest: CommittedBlock) => {
    // The stored one may still wait in the pending group or be being written.
    await commit();
    await written();
    const stored = await storedBlocks.of(block.height, newest.height);
    if (block.height > comparedThrough) comparedThrough = block.height;
    // Blocks without a hash (stored before hashes were kept, or a source without them) cannot be told apart.
    if (stored === undefined || stored.hash === '' || block.hash === '') return;
    if (stored.hash.toLowerCase() !== block.hash.toLowerCase()) {
      stats.blocksWithOtherHash++;
      opts.onWarning?.(
        `block ${block.height} came again with hash ${block.hash}, but the stored block ${block.height} has hash ${stored.hash}; ` +
          'kept the stored one (was the chain restarted?)',
      );
      return;
    }
    // A block stored before digests were kept has none: its hash is all there is to compare.
    if (stored.digest === '' || stored.digest === blockDigest(block)) return;
    stats.blocksWithOtherContent++;
    mismatched.push(block.height);
  };

  const accept = async (block: Block, offset: number) => {
    if (last && block.chainId !== last.chainId) {
      await fail(`block ${block.height} is of chain "${block.chainId}", the store holds chain "${last.chainId}"`, offset);
    }
    if (last && block.height <= last.height) {
      stats.blocksAlreadyStored++;
      await compareWithStored(block, last);
      return;
    }
    // Past the blocks the store holds: every one that differs has been named.
    if (mismatched.length > 0) throw mismatch();
    if (last && block.height !== last.height + 1n && !opts.allowGaps) {
      await fail(`block ${block.height} follows stored block ${last.height}: blocks ${last.height + 1n}..${block.height - 1n} are missing (use --allow-gaps to accept)`, offset);
    }
    try {
      pending.add(block, offset);
    } catch (e) {
      await fail(`block ${block.height} cannot be stored: ${(e as Error).message}`, offset);
    }
    last = { height: block.height, time: block.time, chainId: block.chainId, hash: block.hash };
    stats.heightRead = block.height;
    if (pending.isDue()) await commit();
  };

  const batches = source.events()[Symbol.asyncIterator]();
  // The source is done (ended or failed) and needs no release.
  let finished = false;
  // A read is in flight: releasing the source must not wait for it.
  let reading = false;
  // Where the block being assembled starts, and where the source was cut off, if it was.
  let openedAt = 0;
  let cutOff: EventBatch['cutOff'];
  try {
    while (!signal?.aborted) {
      if (writeFailure) await written();
      const next = batches.next();
      reading = true;
      let result: IteratorResult<EventBatch> | typeof TIMED_OUT | typeof ABORTED;
      try {
        if (pending.size > 0) {
          // Blocks waiting to be committed do not wait on a source that has nothing ready.
          result = await within(next, pending.patienceMs());
          if (result === TIMED_OUT) {
            await commit();
            result = await untilAborted(next, signal);
          }
        } else if (mismatched.length > 0) {
          // Nor does a mismatch found: it is reported once the source has nothing more.
          result = await within(next, MISMATCH_IDLE_MS);
          if (result === TIMED_OUT) throw mismatch(`the source had nothing more for ${MISMATCH_IDLE_MS / 1000} s`);
        } else {
          result = await untilAborted(next, signal);
        }
      } catch (e) {
        if (!(e instanceof CorruptInputError)) throw e;
        finished = true;
        await fail(e.message, e.offset ?? openedAt);
        throw e;
      }
      // Stopped while the source had nothing to read: that read is left to the release below.
      if (result === ABORTED) break;
      reading = false;
      if (result.done) {
        finished = true;
        const height = assembler.openHeight;
        if (height !== undefined) stats.incompleteBlock = { height, offset: openedAt };
        else if (cutOff) stats.incompleteBlock = { offset: cutOff.offset };
        break;
      }
      const batch = result.value;
      if (batch.restart) assembler.discardOpenBlock();
      cutOff = batch.cutOff;
      for (const { event, offset } of batch.events) {
        stats.events++;
        if (event.kind === 'beginBlock') openedAt = offset;
        let block: Block | undefined;
        try {
          block = assembler.push(event);
        } catch (e) {
          if (e instanceof CorruptInputError) await fail(e.message, offset);
          throw e;
        }
        if (block) await accept(block, offset);
      }
    }
    await commit();
    await written();
    if (mismatched.length > 0) throw mismatch(signal?.aborted ? 'stopped on request' : undefined);
  } finally {
    // Nothing is left being written when ingestion returns or throws.
    await Promise.all(writes);
    // Like `for await`, a source left early releases its file, socket or stream.
    if (!finished && !reading) await batches.return?.();
    // A commit failed while a read was in flight: the release runs once that read
    // settles, and a failure of either must not hide the error already thrown.
    else if (!finished) batches.return?.().catch(() => {});
  }
  return snapshotCounts(stats, assembler);
}

function snapshotCounts(stats: IngestStats, assembler: BlockAssembler): IngestStats {
  stats.eventsOutsideBlock = assembler.counts.outsideBlock;
  stats.skippedByType = Object.fromEntries(assembler.counts.skippedByType);
  return stats;
}
