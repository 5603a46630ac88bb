/**
 * The order side of the simulated network: new orders every block and the
 * lifecycles of resting ones (amends, fills, parking, cancels, expiries),
 * emitted as the Order events the network's core would publish.
 *
 * Memory stays proportional to the live orders: every resting order has a
 * planned end, and future steps wait in per-block buckets, not in a scan of
 * every order ever made.
 *
 * Each event is marked with the transaction it belongs to (numbered within
 * the block, 0 for what the network does at the block boundary), so the
 * stream can give it a transaction hash as a core does.
 *
 * Longer than our ~400 lines on purpose: it is one state machine whose steps
 * (new orders, amends, fills, parking, auctions, expiries) all read and change
 * the same book and buckets; split apart, each piece would take the whole
 * state as arguments.
 */
import { STATUS, TIF, TYPE } from '../domain/enums.js';
import { NETWORK_PARTY, type Order } from '../domain/order.js';
import { BlockClock, BlockTimes } from './clock.js';
import {
  amendedSize,
  createUniverse,
  nextReference,
  offsetString,
  priceString,
  randomSize,
  walkMid,
  type Market,
  type Party,
  type Universe,
} from './markets.js';
import {
  ERR, INTENTS, INVALID_REASONS, PEG_BEST_ASK, PEG_BEST_BID, PEG_MID, PEG_UNSPECIFIED, SIDE_BUY, SIDE_SELL, isPegged, type Intent,
} from './order-kinds.js';
import type { Random } from './random.js';

/** Per block, the chance that a market in continuous trading goes into an auction. */
const AUCTION_CHANCE = 0.01;
/** Markets that start the simulation in their opening auction. */
const OPENING_AUCTION_MARKETS = 3;
/** Orders whose next step is a follow-up in the very block they were created in. */
const SAME_BLOCK_FOLLOW_UP = 0.04;
/** Longest wait between two steps of a resting order, in blocks. */
const MAX_STEP_GAP = 60;
/** New transactions that place several orders at once (one party, one createdAt). */
const BATCH_CHANCE = 0.03;
/** A transaction stamped in the same microsecond as the order created just before it, some nanoseconds later. */
const SAME_MICRO_CHANCE = 0.1;
/** Orders without an error that carry reason ORDER_ERROR_UNSPECIFIED explicitly. */
const EXPLICIT_NO_ERROR_CHANCE = 0.08;
/** Orders that are not pegged but carry a PeggedOrder with reference PEGGED_REFERENCE_UNSPECIFIED. */
const EMPTY_PEG_CHANCE = 0.06;

interface MarketBook extends Market {
  /** Block index at which the current auction ends; -1 in continuous trading. */
  auctionUntil: number;
  /** Counts auctions; orders placed during one carry it as batchId. */
  batch: bigint;
  /** Open pegged orders: parked when an auction starts, restored when it ends. */
  pegged: Set<LiveOrder>;
  /** Open good-for-auction orders: settled when the auction ends. */
  goodForAuction: Set<LiveOrder>;
}

interface LiveOrder {
  /** Current state; nested objects are replaced, never mutated, since emitted snapshots share them. */
  o: Order;
  book: MarketBook;
  /** Amends, fills and parkings still to come before the end. */
  stepsLeft: number;
  end: 'fill' | 'cancel' | 'expire';
  /** Block index of the next step; bucket entries with another index are stale. */
  nextAt: number;
  /** Block index at which a GTT order expires; -1 for none. */
  expireAt: number;
  /** Parked because of an auction (restored when it ends), not by a missing reference price. */
  parkedByAuction: boolean;
  closed: boolean;
}

/** Busier spells: `blocks` blocks out of every `every` (from the first) take `factor` times the new orders. */
export interface Bursts {
  every: number;
  blocks: number;
  factor: number;
}

export interface NetworkOptions {
  ordersPerBlock: number;
  bursts?: Bursts | undefined;
  startTime: bigint;
  blockIntervalNs: bigint;
  markets?: number;
  parties?: number;
}

export class OrderNetwork {
  private readonly universe: Universe;
  private readonly books: MarketBook[];
  private readonly clock: BlockClock;
  private readonly times: BlockTimes;
  private readonly buckets = new Map<number, LiveOrder[]>();
  private out: Order[] = [];
  private txOut: number[] = [];
  /** The transaction events are emitted in: 0 at the block boundary, then 1, 2, ... */
  private tx = 0;
  /** Clock tick at which the latest order was created, to stamp the next one in the same microsecond. */
  private createdTick = -1;
  /** While a transaction places several orders, their common creation time and party. */
  private batch: { createdAt: bigint; party: Party } | undefined;
  private index = 0;
  private liveCount = 0;
  ordersCreated = 0;
  orderEvents = 0;

  constructor(private readonly rng: Random, private readonly opts: NetworkOptions) {
    this.universe = createUniverse(rng, { markets: opts.markets ?? 20, parties: opts.parties ?? 2000 });
    this.books = this.universe.markets.map((m, i) => ({
      ...m,
      auctionUntil: i < OPENING_AUCTION_MARKETS ? rng.between(3, 6) : -1,
      batch: i < OPENING_AUCTION_MARKETS ? 1n : 0n,
      pegged: new Set<LiveOrder>(),
      goodForAuction: new Set<LiveOrder>(),
    }));
    this.clock = new BlockClock(rng, opts.blockIntervalNs, opts.ordersPerBlock * 2.5);
    this.times = new BlockTimes(opts.startTime, opts.blockIntervalNs);
  }

  /** Orders still open (resting, parked or waiting for an auction). */
  get liveOrders(): number {
    return this.liveCount;
  }

  /** The time of block `index` (0-based). */
  blockTime(index: number): bigint {
    return this.times.at(index);
  }

  /**
   * Runs block `index` (0-based; blocks run in order), appending its Order
   * events in event order to `out`, and the transaction of each, at the same
   * index, to `txOf` (0: none, the block's own doing; else its number in the
   * block, the events of one transaction coming together).
   */
  runBlock(index: number, out: Order[], txOf: number[] = []): void {
    this.out = out;
    this.txOut = txOf;
    this.tx = 0;
    this.index = index;
    this.clock.startBlock(this.blockTime(index), this.blockTime(index + 1));
    for (const book of this.books) walkMid(book, this.rng);

    const due = this.takeDue(index);
    // Expiry happens as the block's time is set, before any transaction.
    const pending: LiveOrder[] = [];
    for (const s of due) {
      if (s.expireAt === index) this.expire(s);
      else pending.push(s);
    }
    for (const book of this.books) this.updateAuction(book);

    const bursts = this.opts.bursts;
    const average = this.opts.ordersPerBlock * (bursts !== undefined && index % bursts.every < bursts.blocks ? bursts.factor : 1);
    const fresh = Math.round(average * (0.5 + this.rng.float()));
    let taken = 0;
    let made = 0;
    while (taken < pending.length || made < fresh) {
      const left = pending.length - taken;
      if (this.rng.int(left + fresh - made) < left) {
        const s = pending[taken++] as LiveOrder;
        if (!s.closed && s.nextAt === index) {
          this.tx++;
          this.step(s);
        }
      } else {
        this.tx++;
        made += this.createTransaction();
      }
    }
  }

  private takeDue(index: number): LiveOrder[] {
    const bucket = this.buckets.get(index);
    if (bucket === undefined) return [];
    this.buckets.delete(index);
    // Entries go stale when an order closes or is rescheduled; drop them here.
    return bucket.filter((s) => !s.closed && s.nextAt === index);
  }

  private emit(o: Order): void {
    this.out.push({ ...o });
    this.txOut.push(this.tx);
    this.orderEvents++;
  }

  private inAuction(book: MarketBook): boolean {
    return book.auctionUntil >= 0;
  }

  // ---- creation -------------------------------------------------------

  /**
   * One transaction that places new orders: mostly one, sometimes a batch of
   * a few from one party, all created at the very same time. Returns how many.
   */
  private createTransaction(): number {
    const rng = this.rng;
    if (!rng.chance(BATCH_CHANCE)) {
      this.createOrder();
      return 1;
    }
    const count = rng.between(2, 4);
    const party = this.universe.parties[this.universe.partyPicker.sample(rng)] as Party;
    this.batch = { createdAt: this.creationTime(), party };
    for (let i = 0; i < count; i++) this.createOrder();
    this.batch = undefined;
    return count;
  }

  /** Some transactions are stamped in the microsecond of the order created just before them. */
  private creationTime(): bigint {
    const sameMicro = this.createdTick === this.clock.ticks && this.rng.chance(SAME_MICRO_CHANCE);
    const t = sameMicro ? this.clock.tickSameMicro() : this.clock.tick();
    this.createdTick = this.clock.ticks;
    return t;
  }

  private createOrder(): void {
    const rng = this.rng;
    const book = this.books[this.universe.marketPicker.sample(rng)] as MarketBook;
    let intent = INTENTS.sample(rng);
    const auction = this.inAuction(book);
    if (auction && rng.chance(0.15)) intent = 'gfa';
    // The network only closes out positions while the market trades continuously,
    // and a batch is one ordinary party's.
    if ((auction || this.batch !== undefined) && intent === 'network') intent = 'gtc';
    if (this.batch !== undefined && intent === 'liquidity') intent = 'gtc';

    const o = this.baseOrder(book, intent);
    this.ordersCreated++;
    switch (intent) {
      case 'ioc':
      case 'fok':
      case 'market':
      case 'network':
        this.settleImmediately(o, book);
        return;
      case 'invalid':
        this.reject(o, this.invalidReason(o, book));
        return;
      case 'gfn':
        if (auction) return this.reject(o, ERR.CANNOT_SEND_GFN_ORDER_DURING_AN_AUCTION);
        break;
      case 'gfa':
        if (!auction) return this.reject(o, ERR.CANNOT_SEND_GFA_ORDER_DURING_CONTINUOUS_TRADING);
        break;
      default:
        break;
    }
    this.rest(o, book, intent);
  }

  private baseOrder(book: MarketBook, intent: Intent): Order {
    const rng = this.rng;
    const side = rng.chance(0.5) ? SIDE_BUY : SIDE_SELL;
    let partyId: string;
    let reference = '';
    let liquidityProvisionId = '';
    if (intent === 'network') {
      partyId = NETWORK_PARTY;
    } else if (intent === 'liquidity') {
      const lp = rng.pick(book.liquidityProviders);
      partyId = lp.partyId;
      liquidityProvisionId = lp.provisionId;
    } else {
      const party = this.batch?.party ?? (this.universe.parties[this.universe.partyPicker.sample(rng)] as Party);
      partyId = party.id;
      reference = nextReference(party);
    }
    const size = randomSize(book, rng);
    const o: Order = {
      id: rng.hex(64),
      marketId: book.id,
      partyId,
      side,
      price: this.limitPrice(book, side),
      size,
      remaining: size,
      timeInForce: TIF.GTC,
      type: TYPE.LIMIT,
      createdAt: this.batch?.createdAt ?? this.creationTime(),
      status: STATUS.ACTIVE,
      expiresAt: 0n,
      reference,
      updatedAt: 0n,
      version: 1n,
      batchId: this.inAuction(book) ? book.batch : 0n,
      liquidityProvisionId,
      postOnly: false,
      reduceOnly: false,
    };
    // Fields a core may set to their zero value rather than leave out: the
    // original answers both alike (no reason; peggedOrder null).
    if (rng.chance(EXPLICIT_NO_ERROR_CHANCE)) o.reason = ERR.UNSPECIFIED;
    if (rng.chance(EMPTY_PEG_CHANCE)) {
      o.peggedOrder = { reference: PEG_UNSPECIFIED, offset: rng.chance(0.7) ? '0' : offsetString(book, 1 + rng.int(5)) };
    }
    return o;
  }

  /** A passive price a little inside or behind the mid, on the order's side. */
  private limitPrice(book: MarketBook, side: number): string {
    const away = book.mid * 0.01 * this.rng.float();
    return priceString(book, side === SIDE_BUY ? book.mid - away : book.mid + away, this.rng);
  }

  /** IOC, FOK, market and network orders end in the transaction that created them. */
  private settleImmediately(o: Order, book: MarketBook): void {
    const rng = this.rng;
    const intent: 'ioc' | 'fok' =
      o.partyId === NETWORK_PARTY ? (rng.chance(0.7) ? 'fok' : 'ioc')
      : rng.chance(0.6) ? 'ioc' : 'fok';
    o.timeInForce = intent === 'ioc' ? TIF.IOC : TIF.FOK;
    if (o.partyId === NETWORK_PARTY) {
      o.type = TYPE.NETWORK;
      o.price = priceString(book, book.mid, rng);
    } else if (rng.chance(0.4)) {
      o.type = TYPE.MARKET;
      o.price = '0';
    }
    if (o.type !== TYPE.NETWORK && rng.chance(0.15)) o.reduceOnly = true;

    if (this.inAuction(book)) {
      return this.reject(o, intent === 'ioc' ? ERR.CANNOT_SEND_IOC_ORDER_DURING_AUCTION : ERR.CANNOT_SEND_FOK_ORDER_DURING_AUCTION);
    }
    // Sometimes the core publishes the accepted order before its outcome.
    const twoEvents = rng.chance(0.3);
    if (twoEvents) this.emit(o);

    const roll = rng.float();
    if (roll < (o.type === TYPE.NETWORK ? 0.8 : 0.55)) {
      o.remaining = 0n;
      o.status = STATUS.FILLED;
    } else if (intent === 'ioc' && roll < 0.8 && o.size > 1n) {
      // An IOC order that traded part of its size and dropped the rest.
      o.remaining = this.partOf(o.remaining);
      o.status = STATUS.PARTIALLY_FILLED;
    } else {
      o.status = STATUS.STOPPED;
      if (o.reduceOnly && rng.chance(0.6)) o.reason = ERR.REDUCE_ONLY_ORDER_WOULD_NOT_REDUCE_POSITION;
      else if (intent === 'ioc' && rng.chance(0.5)) o.reason = ERR.NON_PERSISTENT_ORDER_OUT_OF_PRICE_BOUNDS;
    }
    if (twoEvents) o.updatedAt = this.clock.tick();
    this.emit(o);
  }

  private invalidReason(o: Order, book: MarketBook): number {
    const reason = INVALID_REASONS.sample(this.rng);
    switch (reason) {
      case ERR.POST_ONLY_ORDER_WOULD_TRADE:
        o.postOnly = true;
        break;
      case ERR.EXPIRYAT_BEFORE_CREATEDAT:
      case ERR.INVALID_EXPIRATION_DATETIME:
        o.timeInForce = TIF.GTT;
        o.expiresAt = o.createdAt - BigInt(1 + this.rng.int(1_000_000_000));
        break;
      case ERR.TOO_MANY_PEGGED_ORDERS:
        this.makePegged(o, book);
        break;
      case ERR.INSUFFICIENT_FUNDS_TO_PAY_FEES:
        o.timeInForce = TIF.IOC;
        break;
      default:
        break;
    }
    return reason;
  }

  private reject(o: Order, reason: number): void {
    o.status = STATUS.REJECTED;
    o.reason = reason;
    o.remaining = o.size;
    this.emit(o);
  }

  /** Orders that rest on the book: plain limit, pegged, liquidity, iceberg, GFN, GFA. */
  private rest(o: Order, book: MarketBook, intent: Intent): void {
    const rng = this.rng;
    const auction = this.inAuction(book);
    const s: LiveOrder = {
      o, book, stepsLeft: rng.geometric(0.45), end: rng.chance(0.5) ? 'fill' : 'cancel',
      nextAt: -1, expireAt: -1, parkedByAuction: false, closed: false,
    };
    switch (intent) {
      case 'gtt':
        this.makeGoodTillTime(s);
        if (rng.chance(0.6)) s.end = 'expire';
        break;
      case 'gfn':
        o.timeInForce = TIF.GFN;
        break;
      case 'gfa':
        o.timeInForce = TIF.GFA;
        break;
      case 'pegged':
        this.makePegged(o, book);
        if (rng.chance(0.3)) this.makeGoodTillTime(s);
        break;
      case 'liquidity':
        this.makePegged(o, book);
        // Liquidity orders are repriced and refilled often and live long.
        s.stepsLeft = rng.geometric(0.2);
        s.end = rng.chance(0.8) ? 'cancel' : 'fill';
        break;
      case 'iceberg':
        this.makeIceberg(o);
        if (rng.chance(0.25)) this.makeGoodTillTime(s);
        break;
      default:
        break;
    }
    if ((intent === 'gtc' || intent === 'gtt') && rng.chance(0.1)) o.postOnly = true;

    if (isPegged(o) && auction) {
      o.status = STATUS.PARKED;
      s.parkedByAuction = true;
    } else if (!auction && !o.postOnly && o.icebergOrder === undefined && o.size > 1n && rng.chance(0.1)) {
      // Crossed part of the book on entry and rests with the rest.
      o.remaining = this.partOf(o.size);
    }
    this.emit(o);
    this.liveCount++;
    if (isPegged(o)) book.pegged.add(s);

    if (intent === 'gfa') {
      // Good-for-auction orders are settled by the auction's end, not by a plan.
      book.goodForAuction.add(s);
      return;
    }
    // A follow-up is a transaction of its own: none in the middle of a batch.
    if (this.batch === undefined && rng.chance(SAME_BLOCK_FOLLOW_UP)) {
      this.tx++;
      this.followUp(s);
      if (s.closed) return;
    }
    this.scheduleNext(s);
  }

  private makeGoodTillTime(s: LiveOrder): void {
    s.o.timeInForce = TIF.GTT;
    s.expireAt = this.index + this.rng.between(2, 40);
    // Any moment after the previous block's time: the order expires in block expireAt.
    const at = this.blockTime(s.expireAt);
    s.o.expiresAt = at - BigInt(this.rng.int(Number(at - this.blockTime(s.expireAt - 1))));
  }

  private makePegged(o: Order, book: MarketBook): void {
    const rng = this.rng;
    const reference = rng.chance(0.4) ? PEG_MID : o.side === SIDE_BUY ? PEG_BEST_BID : PEG_BEST_ASK;
    // Offsets from the mid must be positive; from the best price they may be zero.
    const min = reference === PEG_MID ? 1 : 0;
    const ticks = min + rng.int(Math.max(2, Math.floor(book.mid * 0.01)));
    o.peggedOrder = { reference, offset: offsetString(book, ticks) };
    o.price = this.peggedPrice(book, o.side, reference, ticks);
  }

  private peggedPrice(book: MarketBook, side: number, reference: number, offsetTicks: number): string {
    const halfSpread = Math.max(1, Math.round(book.mid * 0.0005));
    const base = reference === PEG_MID ? book.mid : reference === PEG_BEST_BID ? book.mid - halfSpread : book.mid + halfSpread;
    return priceString(book, side === SIDE_BUY ? base - offsetTicks : base + offsetTicks, this.rng);
  }

  private makeIceberg(o: Order): void {
    // Icebergs hide size: they are never tiny.
    if (o.size < 40n) o.size = o.remaining = BigInt(this.rng.between(40, 4000));
    const peakSize = o.size / BigInt(this.rng.between(3, 10));
    const minimumVisibleSize = peakSize / BigInt(this.rng.between(2, 4));
    o.remaining = peakSize;
    o.icebergOrder = { peakSize, minimumVisibleSize, reservedRemaining: o.size - peakSize };
  }

  // ---- lifecycle ------------------------------------------------------

  private scheduleNext(s: LiveOrder): void {
    let at: number;
    if (s.stepsLeft === 0 && s.end === 'expire') at = s.expireAt;
    else at = this.index + 1 + Math.min(MAX_STEP_GAP, this.rng.geometric(0.2));
    this.scheduleAt(s, at);
  }

  private scheduleAt(s: LiveOrder, at: number): void {
    // A GTT order expires when its time comes, whatever else was planned.
    if (s.expireAt >= 0 && at >= s.expireAt) at = s.expireAt;
    s.nextAt = at;
    const bucket = this.buckets.get(at);
    if (bucket === undefined) this.buckets.set(at, [s]);
    else bucket.push(s);
  }

  /** A scheduled step: an intermediate change, or the order's end. */
  private step(s: LiveOrder): void {
    s.nextAt = -1;
    if (s.stepsLeft > 0) {
      s.stepsLeft--;
      this.change(s);
      this.scheduleNext(s);
      return;
    }
    if (s.end === 'fill' && this.inAuction(s.book)) {
      // Nothing trades in an auction; try again once it is over.
      this.scheduleAt(s, s.book.auctionUntil + 1 + this.rng.int(3));
      return;
    }
    if (s.end === 'fill' && s.o.status === STATUS.PARKED) {
      this.unpark(s);
      this.scheduleNext(s);
      return;
    }
    this.finish(s, s.end === 'fill' ? 'fill' : 'cancel');
  }

  /** An extra event for an order in the block that created it: the last one wins downstream. */
  private followUp(s: LiveOrder): void {
    if (s.stepsLeft > 0) {
      s.stepsLeft--;
      this.change(s);
    } else if (s.end === 'cancel') {
      this.finish(s, 'cancel');
    } else {
      this.amend(s);
    }
  }

  private change(s: LiveOrder): void {
    const o = s.o;
    const rng = this.rng;
    if (o.status === STATUS.PARKED) {
      if (s.parkedByAuction) this.amend(s);
      else this.unpark(s);
      return;
    }
    const roll = rng.float();
    if (isPegged(o) && roll < 0.15 && !this.inAuction(s.book)) this.park(s);
    else if (roll < 0.55 || this.inAuction(s.book) || !this.partialFill(s)) this.amend(s);
  }

  /** A new version: another offset for a pegged order, else another price or size. */
  private amend(s: LiveOrder): void {
    const o = s.o;
    const rng = this.rng;
    if (o.peggedOrder !== undefined && isPegged(o)) {
      const { reference, offset } = o.peggedOrder;
      const min = reference === PEG_MID ? 1 : 0;
      let ticks = min + rng.int(Math.max(2, Math.floor(s.book.mid * 0.01)));
      if (offsetString(s.book, ticks) === offset) ticks++;
      o.peggedOrder = { reference, offset: offsetString(s.book, ticks) };
      o.price = this.peggedPrice(s.book, o.side, reference, ticks);
    } else {
      const size = o.icebergOrder === undefined && rng.chance(0.4) ? amendedSize(o.size, o.remaining, rng) : o.size;
      if (size === o.size) {
        const price = this.limitPrice(s.book, o.side);
        o.price = price === o.price ? (BigInt(price) + 1n).toString() : price;
      }
      o.remaining += size - o.size;
      o.size = size;
    }
    o.version++;
    o.updatedAt = this.clock.tick();
    this.emit(o);
  }

  /** Trades part of the order; false when it is too small to trade only part of. */
  private partialFill(s: LiveOrder): boolean {
    const o = s.o;
    const ice = o.icebergOrder;
    if (ice === undefined) {
      if (o.remaining < 2n) return false;
      o.remaining = this.partOf(o.remaining);
    } else {
      // The visible slice trades; below the minimum it is refilled from the reserve.
      let visible = o.remaining > 1n ? this.partOf(o.remaining) : 0n;
      let reserved = ice.reservedRemaining;
      if (visible < ice.minimumVisibleSize && reserved > 0n) {
        const refill = ice.peakSize - visible < reserved ? ice.peakSize - visible : reserved;
        visible += refill;
        reserved -= refill;
      }
      if (visible === 0n) return false;
      o.remaining = visible;
      o.icebergOrder = { ...ice, reservedRemaining: reserved };
    }
    o.updatedAt = this.clock.tick();
    this.emit(o);
    return true;
  }

  /** Between 10% and 70% of `amount` left over, at least 1 and below `amount`. */
  private partOf(amount: bigint): bigint {
    const left = (amount * BigInt(this.rng.between(10, 70))) / 100n;
    if (left < 1n) return 1n;
    return left >= amount ? amount - 1n : left;
  }

  private park(s: LiveOrder): void {
    s.o.status = STATUS.PARKED;
    s.o.updatedAt = this.clock.tick();
    this.emit(s.o);
  }

  private unpark(s: LiveOrder): void {
    s.o.status = STATUS.ACTIVE;
    s.parkedByAuction = false;
    s.o.updatedAt = this.clock.tick();
    this.emit(s.o);
  }

  private finish(s: LiveOrder, how: 'fill' | 'cancel'): void {
    const o = s.o;
    if (how === 'fill') {
      o.remaining = 0n;
      if (o.icebergOrder !== undefined) o.icebergOrder = { ...o.icebergOrder, reservedRemaining: 0n };
      o.status = STATUS.FILLED;
    } else {
      o.status = STATUS.CANCELLED;
    }
    o.updatedAt = this.clock.tick();
    this.emit(o);
    this.close(s);
  }

  private expire(s: LiveOrder): void {
    s.o.status = STATUS.EXPIRED;
    s.o.updatedAt = this.clock.blockTime;
    this.emit(s.o);
    this.close(s);
  }

  private close(s: LiveOrder): void {
    s.closed = true;
    s.nextAt = -1;
    this.liveCount--;
    s.book.pegged.delete(s);
    s.book.goodForAuction.delete(s);
  }

  // ---- auctions -------------------------------------------------------

  private updateAuction(book: MarketBook): void {
    if (book.auctionUntil === this.index) this.endAuction(book);
    else if (!this.inAuction(book) && this.rng.chance(AUCTION_CHANCE)) this.startAuction(book);
  }

  private startAuction(book: MarketBook): void {
    book.auctionUntil = this.index + this.rng.between(2, 6);
    book.batch++;
    for (const s of book.pegged) {
      if (s.o.status !== STATUS.ACTIVE) continue;
      s.o.status = STATUS.PARKED;
      s.parkedByAuction = true;
      s.o.updatedAt = this.clock.tick();
      this.emit(s.o);
    }
  }

  private endAuction(book: MarketBook): void {
    book.auctionUntil = -1;
    // The auction uncrosses: good-for-auction orders trade what they can, the rest is cancelled.
    for (const s of [...book.goodForAuction]) {
      if (this.rng.chance(0.4)) {
        this.finish(s, 'fill');
      } else {
        if (s.o.remaining > 1n && this.rng.chance(0.4)) s.o.remaining = this.partOf(s.o.remaining);
        this.finish(s, 'cancel');
      }
    }
    for (const s of book.pegged) {
      if (s.o.status === STATUS.PARKED && s.parkedByAuction) this.unpark(s);
    }
  }
}
