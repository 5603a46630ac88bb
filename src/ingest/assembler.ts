import { emptyBlock, type Block } from '../domain/block.js';
import { CorruptInputError } from '../errors.js';
import { encodeOrder } from '../wire/order-message.js';
import type { BusEvent } from './events.js';

/** A BusEvent stream that breaks the block rules; the caller adds the position. */

export interface AssemblerCounts {
  /** Events that belong to no block we can store (before the first BeginBlock). */
  outsideBlock: number;
  /** Skipped events by BusEventType (number, or name when the source gave one): types ledger-query does not store. */
  skippedByType: Map<string, number>;
}

/**
 * Groups events into blocks: everything from BeginBlock to the matching
 * EndBlock. A block is handed out only once complete, so a stream that stops
 * mid-block yields nothing of that block.
 */
export class BlockAssembler {
  private open: OpenBlock | undefined;
  /** The last block closed, once one has been: from then on only a BeginBlock may follow an EndBlock. */
  private closed: bigint | undefined;
  readonly counts: AssemblerCounts = { outsideBlock: 0, skippedByType: new Map() };

  /** Height of the block being assembled, if any. */
  get openHeight(): bigint | undefined {
    return this.open?.height;
  }

  /** Feeds one event; returns the block it completes, if it is an EndBlock. */
  push(e: BusEvent): Block | undefined {
    if (e.kind === 'beginBlock') {
      if (this.open) {
        throw new CorruptInputError(`BeginBlock ${e.height} while block ${this.open.height} has no EndBlock`);
      }
      this.open = { ...emptyBlock(e.height, e.timestamp, e.hash, e.chainId), traceId: e.block, idPrefix: `${e.height}-` };
      return undefined;
    }
    const block = this.open;
    if (!block) {
      // The core sends nothing between blocks: after an EndBlock, anything but
      // a BeginBlock is a damaged one, and skipping the block's events as
      // outside any block would lose it without a word.
      if (this.closed !== undefined) {
        throw new CorruptInputError(`event ${e.id} (type ${e.type}) comes after block ${this.closed}'s EndBlock, where a BeginBlock must`);
      }
      // A stream may start in the middle of a block (a rotated file, a core
      // reconnecting): those events cannot be stored atomically, so skip them.
      this.counts.outsideBlock++;
      return undefined;
    }
    // The framing has no checksum: an event naming another block than its
    // BeginBlock did (the core names each by its hash) is corruption, or a broken stream.
    if (e.block !== block.traceId && e.block !== '' && block.traceId !== '') {
      throw new CorruptInputError(`event ${e.id} names block "${e.block}" inside block ${block.height} ("${block.traceId}")`);
    }
    if (e.id !== '' && !e.id.startsWith(block.idPrefix)) {
      throw new CorruptInputError(`event id "${e.id}" does not belong to block ${block.height}`);
    }
    if (e.chainId !== block.chainId) {
      throw new CorruptInputError(`event ${e.id} has chain id "${e.chainId}", its block has "${block.chainId}"`);
    }
    switch (e.kind) {
      case 'endBlock':
        if (e.height !== block.height) {
          throw new CorruptInputError(`EndBlock ${e.height} closes block ${block.height}`);
        }
        this.open = undefined;
        this.closed = block.height;
        return toBlock(block);
      case 'order':
        block.orders.push(e.order);
        block.orderMessages.push(e.encoded ?? encodeOrder(e.order));
        return undefined;
      case 'nodeSignature':
        block.nodeSignatures.push(e.nodeSignature);
        return undefined;
      case 'signerAdded':
        block.signersAdded.push(e.signerAdded);
        return undefined;
      case 'signerRemoved':
        block.signersRemoved.push(e.signerRemoved);
        return undefined;
      case 'timeUpdate':
        return undefined;
      case 'other':
      {
        const label = e.typeLabel ?? String(e.type);
        this.counts.skippedByType.set(label, (this.counts.skippedByType.get(label) ?? 0) + 1);
      }
        return undefined;
    }
  }

  /**
   * Drops a half-assembled block (its source broke off and will resend it).
   * The stream starts again, and may start inside a block, as at first.
   */
  discardOpenBlock(): void {
    this.open = undefined;
    this.closed = undefined;
  }
}

/** A block being assembled, with what its events must agree with. */
interface OpenBlock extends Block {
  /** The BusEvent `block` of its BeginBlock: the block hash in upper case, as the core writes it. */
  traceId: string;
  /** Every event id of the block starts "<height>-". */
  idPrefix: string;
}

function toBlock({ traceId: _t, idPrefix: _p, ...block }: OpenBlock): Block {
  return block;
}
