/**
 * The subscriptions of GET /api/v2/stream/orders in one HTTP process: each
 * gets a snapshot of the live orders it asks for, read at a block, then the
 * changes of every later block that touch it, each block once and in order,
 * with no gap between the two (the original subscribes after sending its
 * snapshot, and can miss a block). A block's changes are read from the store
 * once, however many subscribers take them, and its frames made once per
 * distinct filter. A subscriber that falls behind by more than its buffer is
 * closed, saying why; it never slows the others or ingestion.
 */
import type { BlockChanges, LiveOrders, OrderChange, StreamFilter } from '../../domain/order-stream.js';
import { snapshotFrames, streamOrderJson, updateFrames } from './frames.js';
import { StreamResumeError } from '../errors.js';
import { streamSubscribers } from '../metrics/stream-subscribers.js';

/** What the hub reads of the store. */
export interface OrderStreamSource {
  liveOrders(filter: StreamFilter): Promise<LiveOrders>;
  /**
   * The changes of the blocks after `after`, up to `upTo`, in height order:
   * blocks that changed no order are left out, and at most `maxBlocks` given.
   */
  orderChanges(after: bigint, upTo: bigint, maxBlocks: number): Promise<BlockChanges[]>;
  /** The height of the last committed block (0 before any). */
  lastHeight(): Promise<bigint>;
  /** The lowest height whose changes orderChanges can give, for a resume. */
  firstChangeHeight(): Promise<bigint>;
}

/** Where a subscription's frames go: a WebSocket or a chunked HTTP response (./transports.ts). */
export interface FrameSink {
  /** Queues one frame; the sink adds its own delimiter. */
  send(frame: Frame): void;
  /** Bytes queued and not yet sent. */
  buffered(): number;
  /** Ends the stream for `reason`; an error frame first if there is one. */
  end(reason: StreamEnd): void;
}

/** A frame, encoded once and shared by every sink it goes to. */
export class Frame {
  private bytes: Buffer | undefined;
  constructor(readonly text: string) {}

  get buffer(): Buffer {
    this.bytes ??= Buffer.from(this.text, 'utf8');
    return this.bytes;
  }
}

export type StreamEnd =
  | { kind: 'tooSlow'; buffered: number; limit: number; shared?: true }
  | { kind: 'failed'; message: string }
  | { kind: 'shuttingDown' };

export interface HubOptions {
  /** Bytes a subscriber may leave unread before it is closed. */
  bufferBytes: number;
  /** Bytes all subscribers may leave unread together; past it, one with bytes unread is closed as its next frame comes. */
  sharedBufferBytes?: number;
  /** Blocks read from the store in one go when catching up. */
  readBlocks?: number;
  /**
   * Starts calling `onBlock` whenever a block may have been committed, until
   * the function it returns is called: run only while someone is subscribed,
   * since the embedded store's watch is a poll that would cost every HTTP
   * process CPU for nobody.
   */
  watchBlocks?: (onBlock: () => void) => () => void;
}

/** Does an update's order pass the filter, as the original's updates filter it (docs/compatibility.md, section 12.4). */
function passesUpdates(filter: StreamFilter, change: OrderChange): boolean {
  // The original compares the filter's ids as strings with the stored lower-case ids, and its
  // liquidity test passes every order whatever excludeLiquidity says: matched, not fixed.
  if (filter.marketIds.length > 0 && !filter.marketIds.includes(change.marketId)) return false;
  if (filter.partyIds.length > 0 && !filter.partyIds.includes(change.partyId)) return false;
  return true;
}

const filterKey = (f: StreamFilter) => JSON.stringify([f.marketIds, f.partyIds, f.excludeLiquidity]);

class Subscriber {
  /** The next block whose changes it is owed. */
  next: bigint;
  /** Taking blocks as the hub dispatches them, rather than catching up on its own. */
  live = false;
  ended = false;
  readonly key: string;

  constructor(readonly filter: StreamFilter, readonly sink: FrameSink, start: bigint) {
    this.next = start + 1n;
    this.key = filterKey(filter);
  }
}

export class OrderStreamHub {
  private readonly subscribers = new Set<Subscriber>();
  /** The last block whose changes were dispatched. */
  private position: bigint | undefined;
  private dispatching: Promise<void> | undefined;
  private again = false;
  private readonly readBlocks: number;
  /** Stops the block watch; set while the hub has subscribers. */
  private stopWatching: (() => void) | undefined;

  constructor(private readonly source: OrderStreamSource, private readonly options: HubOptions) {
    this.readBlocks = options.readBlocks ?? 100;
  }

  get size(): number {
    return this.subscribers.size;
  }

  /**
   * Starts a subscription: from a snapshot of the live orders it matches, or
   * with `fromBlock`, from the changes of the blocks after that one (a
   * resume; a StreamResumeError, before any frame, for one the store cannot
   * serve). Resolves once the subscriber takes blocks as they come.
   */
  async subscribe(filter: StreamFilter, sink: FrameSink, fromBlock?: bigint): Promise<() => void> {
    let start: bigint;
    if (fromBlock === undefined) {
      const snapshot = await this.source.liveOrders(filter);
      for (const text of snapshotFrames(snapshot.nodes.map(streamOrderJson))) sink.send(new Frame(text));
      start = snapshot.height;
    } else {
      const first = await this.source.firstChangeHeight();
      if (fromBlock + 1n < first) {
        throw new StreamResumeError(
          `fromBlock ${fromBlock}: this store holds the changes of blocks from ${first} on; resume from ${first - 1n} or later, or take a snapshot`,
        );
      }
      start = fromBlock;
    }
    const sub = new Subscriber(filter, sink, start);
    this.subscribers.add(sub);
    streamSubscribers.opened();
    // Before the catch-up: a block committed during it is learnt from the watch, whose first look says "maybe".
    this.stopWatching ??= this.options.watchBlocks?.(() => this.blockCommitted());
    try {
      await this.catchUp(sub);
    } catch (e) {
      this.unsubscribe(sub);
      throw e;
    }
    return () => this.unsubscribe(sub);
  }

  /** A block may have been committed: dispatches every new block's changes. */
  blockCommitted(): void {
    // With nobody subscribed nothing is owed, nor read: a subscriber starts from its own snapshot.
    if (this.subscribers.size === 0) {
      if (this.dispatching === undefined) this.position = undefined;
      return;
    }
    if (this.dispatching) {
      this.again = true;
      return;
    }
    this.dispatching = this.dispatch().finally(() => {
      this.dispatching = undefined;
      if (this.again) {
        this.again = false;
        this.blockCommitted();
      }
    });
  }

  /** Resolves once every block committed so far has been dispatched. */
  async settled(): Promise<void> {
    while (this.dispatching !== undefined) await this.dispatching;
  }

  /** Ends every subscription (the server is stopping). */
  close(): void {
    for (const sub of this.subscribers) this.end(sub, { kind: 'shuttingDown' });
  }

  private unsubscribe(sub: Subscriber): void {
    sub.ended = true;
    // Once per subscriber, however many ways it ends (it left, was dropped, the server closed).
    if (this.subscribers.delete(sub)) streamSubscribers.closed();
    if (this.subscribers.size === 0 && this.stopWatching !== undefined) {
      this.stopWatching();
      this.stopWatching = undefined;
    }
  }

  private end(sub: Subscriber, reason: StreamEnd): void {
    if (sub.ended) return;
    this.unsubscribe(sub);
    sub.sink.end(reason);
  }

  /** Bytes every subscriber has left unread. */
  private unsent(): number {
    let bytes = 0;
    for (const sub of this.subscribers) bytes += sub.sink.buffered();
    return bytes;
  }

  /**
   * Sends frames, closing the subscriber instead if it has fallen too far
   * behind, or if it has bytes unread while all together hold their shared
   * budget (`shared.unsent`, counted on as frames go).
   */
  private deliver(sub: Subscriber, frames: readonly Frame[], shared = { unsent: this.unsent() }): void {
    const sharedLimit = this.options.sharedBufferBytes ?? Infinity;
    for (const frame of frames) {
      if (sub.ended) return;
      const buffered = sub.sink.buffered();
      if (buffered > this.options.bufferBytes) {
        this.end(sub, { kind: 'tooSlow', buffered, limit: this.options.bufferBytes });
        return;
      }
      if (buffered > 0 && shared.unsent + frame.buffer.length > sharedLimit) {
        this.end(sub, { kind: 'tooSlow', buffered, limit: sharedLimit, shared: true });
        return;
      }
      sub.sink.send(frame);
      shared.unsent += frame.buffer.length;
    }
  }

  /** Reads what a subscriber is owed up to the hub's position, then lets it take blocks as they come. */
  private async catchUp(sub: Subscriber): Promise<void> {
    if (this.position === undefined) {
      const height = await this.source.lastHeight();
      // Set only if still unset once read: another subscriber's read may have set it, and blocks been dispatched
      // from there since; a later height here would skip them for the live subscribers (`??= await` checks before it waits).
      this.position ??= height;
    }
    while (!sub.ended && sub.next <= this.position) {
      const upTo = this.position;
      const blocks = await this.source.orderChanges(sub.next - 1n, upTo, this.readBlocks);
      for (const block of blocks) {
        if (block.height < sub.next) continue;
        this.deliver(sub, framesFor(sub.filter, block));
        sub.next = block.height + 1n;
      }
      // Fewer than asked for: nothing changed up to `upTo`, the position read before the wait (blocks dispatched
      // meanwhile skipped this subscriber, so moving it to the position now would lose them).
      if (blocks.length < this.readBlocks && sub.next <= upTo) sub.next = upTo + 1n;
    }
    // No await between the last check and this: the next block dispatched is the one it is owed.
    sub.live = true;
    this.blockCommitted();
  }

  private async dispatch(): Promise<void> {
    const height = await this.source.lastHeight();
    this.position ??= height;
    while (this.position < height && this.subscribers.size > 0) {
      const blocks = await this.source.orderChanges(this.position, height, this.readBlocks);
      if (blocks.length === 0) {
        this.position = height;
        break;
      }
      for (const block of blocks) {
        const byFilter = new Map<string, Frame[]>();
        // Summed once a block: the subscribers it reaches add what they are sent.
        const shared = { unsent: this.unsent() };
        for (const sub of this.subscribers) {
          // A live subscriber is owed every block from its next on; blocks between that changed nothing owe it nothing.
          if (!sub.live || sub.next > block.height) continue;
          let frames = byFilter.get(sub.key);
          if (frames === undefined) {
            frames = framesFor(sub.filter, block);
            byFilter.set(sub.key, frames);
          }
          this.deliver(sub, frames, shared);
          sub.next = block.height + 1n;
        }
        this.position = block.height;
      }
    }
    // With nobody subscribed, nothing is owed: later subscribers start from their own snapshot.
    if (this.subscribers.size === 0) this.position = height;
  }
}

function framesFor(filter: StreamFilter, block: BlockChanges): Frame[] {
  const nodes = block.changes.filter((c) => passesUpdates(filter, c)).map((c) => streamOrderJson(c.node));
  return updateFrames(nodes).map((text) => new Frame(text));
}
