/**
 * A deterministic synthetic network: the BusEvent stream its core would
 * publish, block by block, for tests, the demo and benchmarks. It is shaped
 * like the real network's own recording (docs/compatibility.md, sections 9 and 10):
 * events name their block by its hash in upper case, ids count from "H-1",
 * every event carries a transaction hash, times have nanosecond digits, and
 * the stream starts with its first height twice, as a restarted chain does.
 */
import { UsageError } from '../errors.js';
import type { Order } from '../domain/order.js';
import { busEventTypeOf } from '../ingest/codec.js';
import type { BusEvent, EventBody } from '../ingest/events.js';
import { ValidatorNetwork } from './bundles.js';
import { OrderNetwork, type Bursts } from './network.js';
import { Random } from './random.js';

export interface SimulateOptions {
  seed: number;
  /** Blocks the network runs, one height each (the repeated first height's extra copy not counted). */
  blocks: number;
  /** Average number of new orders per block. */
  ordersPerBlock?: number;
  /** Busier spells (none by default): the benchmarks' network of a realistic rate. */
  bursts?: Bursts;
  chainId?: string;
  startHeight?: bigint;
  /** Unix ns of the first block, before its jitter (block times carry nanosecond digits). */
  startTime?: bigint;
  blockIntervalNs?: bigint;
  /**
   * Start as the real recording does (default true): the first height comes
   * twice, with two hashes and the same time. The first copy holds no orders
   * and no bundles (a time update and a skipped event); the second is the
   * network's first block. A data node keeps the first copy and skips the
   * second, and with it whatever that block did.
   */
  repeatFirstHeight?: boolean;
}

export interface SimulationSummary {
  /** Events in the stream. */
  events: number;
  /** Blocks in the stream (BeginBlock .. EndBlock), both copies of a repeated height counted. */
  blocks: number;
  /** Distinct heights (`blocks` less the repeated height's extra copy): what a data node keeps a block of. */
  heights: number;
  /** Distinct order ids, including orders of the block a data node skips. */
  orders: number;
  orderEvents: number;
  /** Signer-added events (bundles). */
  bundles: number;
}

/** Internal variations of a stream, for writeEventFile. */
export interface StreamShape {
  /**
   * Given, the stream goes on after the `blocks` blocks with one more whole
   * block, for a writer to cut short, and this is called just before its
   * first event is yielded. The summary leaves that block out, so it
   * describes the whole blocks only.
   */
  onExtraBlock?: () => void;
}

export const DEFAULT_ORDERS_PER_BLOCK = 50;
export const DEFAULT_CHAIN_ID = 'ledger-query-sim';
/** 2024-01-01T00:00:00Z. */
export const DEFAULT_START_TIME = 1_704_067_200_000_000_000n;
export const DEFAULT_BLOCK_INTERVAL_NS = 1_000_000_000n;

/**
 * Event types a data node of this service does not store; a few appear in
 * every stream so that readers prove they skip them.
 */
const SKIPPED_TYPES = [3, 6, 8, 11, 12] as const;
/** Sent at each epoch boundary, also skipped. */
const EPOCH_EVENT_TYPE = 29;

/** Independent random streams, so one part's draws do not shift another's. */
const STREAM = { orders: 1, validators: 2, blocks: 3, restart: 5 } as const;
/**
 * Transaction hashes are taken in turn from a pool made once, from a random
 * place per block: one array read per transaction instead of a fresh random
 * hash (which made generation half again as slow). Hashes are distinct within
 * a block of fewer transactions than this; across blocks they repeat, which
 * nothing that reads them can tell.
 */
const TX_POOL = 8192;

function checkOptions(opts: SimulateOptions): void {
  if (!Number.isSafeInteger(opts.seed)) throw new UsageError(`seed must be an integer, got ${opts.seed}`);
  if (!Number.isSafeInteger(opts.blocks) || opts.blocks < 0) throw new UsageError(`blocks must be a non-negative integer, got ${opts.blocks}`);
  const perBlock = opts.ordersPerBlock ?? DEFAULT_ORDERS_PER_BLOCK;
  if (!Number.isFinite(perBlock) || perBlock < 0) throw new UsageError(`orders per block must be >= 0, got ${perBlock}`);
  if ((opts.blockIntervalNs ?? DEFAULT_BLOCK_INTERVAL_NS) < 1n) throw new UsageError('the block interval must be at least 1 ns');
  if ((opts.startHeight ?? 1n) < 1n) throw new UsageError('the start height must be at least 1');
}

/** Hands out the ids, block name and transaction hash of one block's events. */
class BlockEvents {
  /** The block's hash as events name it (upper case); BeginBlock carries it in lower case. */
  readonly name: string;
  /** "<height>-": ids are this and the sequence in the block, from 1 (the BeginBlock). */
  private readonly idPrefix: string;
  private seq = 1;
  events = 0;

  constructor(
    height: bigint,
    readonly hash: string,
    private readonly chainId: string,
  ) {
    this.name = hash.toUpperCase();
    this.idPrefix = `${height}-`;
  }

  /** An event of `body`; `txHash` defaults to the block's own, as for everything done at its boundary. */
  wrap(body: EventBody, txHash = this.name): BusEvent {
    this.events++;
    return { id: this.idPrefix + this.seq++, block: this.name, type: busEventTypeOf(body.kind), chainId: this.chainId, txHash, ...body };
  }

  /** An event of a type a data node skips. */
  other(type: number): BusEvent {
    this.events++;
    return { id: this.idPrefix + this.seq++, block: this.name, type, chainId: this.chainId, txHash: this.name, kind: 'other' };
  }
}

/**
 * Every event of the simulated chain, in order. The generator's return value
 * summarises what it produced (with `shape.onExtraBlock`, all but the extra block).
 */
export function* simulateEvents(opts: SimulateOptions, shape: StreamShape = {}): Generator<BusEvent, SimulationSummary, undefined> {
  checkOptions(opts);
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID;
  const startHeight = opts.startHeight ?? 1n;
  const startTime = opts.startTime ?? DEFAULT_START_TIME;
  const blockIntervalNs = opts.blockIntervalNs ?? DEFAULT_BLOCK_INTERVAL_NS;
  const ordersPerBlock = opts.ordersPerBlock ?? DEFAULT_ORDERS_PER_BLOCK;

  const orders = new OrderNetwork(new Random(opts.seed, STREAM.orders), { ordersPerBlock, startTime, blockIntervalNs, bursts: opts.bursts });
  const validators = new ValidatorNetwork(new Random(opts.seed, STREAM.validators), { startTime, blockIntervalNs });
  const rng = new Random(opts.seed, STREAM.blocks);
  const txPool: string[] = [];
  for (let i = 0; i < TX_POOL; i++) txPool.push(rng.hex(64).toUpperCase());

  const orderBuffer: Order[] = [];
  const txOf: number[] = [];
  const extras: EventBody[] = [];
  let events = 0;
  let blocks = 0;
  let repeated = 0;
  const summary = (): SimulationSummary => ({
    events,
    blocks,
    heights: blocks - repeated,
    orders: orders.ordersCreated,
    orderEvents: orders.orderEvents,
    bundles: validators.signersAdded,
  });

  if (opts.blocks > 0 && (opts.repeatFirstHeight ?? true)) {
    // The chain's first start: it got as far as one block, then was started
    // again from scratch, so the height comes again with another hash. Drawn
    // from a stream of its own, so that what follows does not depend on it.
    const restart = new Random(opts.seed, STREAM.restart);
    const time = orders.blockTime(0);
    const b = new BlockEvents(startHeight, restart.hex(64), chainId);
    yield b.wrap({ kind: 'beginBlock', height: startHeight, timestamp: time, hash: b.hash });
    yield b.wrap({ kind: 'timeUpdate', timestamp: time });
    yield b.other(restart.pick(SKIPPED_TYPES));
    yield b.wrap({ kind: 'endBlock', height: startHeight });
    events += b.events;
    blocks++;
    repeated++;
  }

  let whole: SimulationSummary | undefined;
  const total = opts.blocks + (shape.onExtraBlock === undefined ? 0 : 1);
  for (let index = 0; index < total; index++) {
    if (index === opts.blocks) {
      whole = summary();
      shape.onExtraBlock?.();
    }
    const height = startHeight + BigInt(index);
    const time = orders.blockTime(index);
    const b = new BlockEvents(height, rng.hex(64), chainId);

    yield b.wrap({ kind: 'beginBlock', height, timestamp: time, hash: b.hash });
    yield b.wrap({ kind: 'timeUpdate', timestamp: time });
    if (validators.startsEpoch(index)) yield b.other(EPOCH_EVENT_TYPE);

    orderBuffer.length = 0;
    txOf.length = 0;
    extras.length = 0;
    orders.runBlock(index, orderBuffer, txOf);
    validators.runBlock(index, extras);

    // The multisig events (one validator transaction) land between two of
    // the block's transactions, and a few skipped events too.
    const count = orderBuffer.length;
    const boundary = (i: number): number => {
      while (i > 0 && i < count && txOf[i] === txOf[i - 1]) i++;
      return i;
    };
    const extrasAt = boundary(rng.int(count + 1));
    let nextTx = rng.int(TX_POOL);
    // The validators' transaction; one of the pool's too.
    const extrasTx = txPool[nextTx++ % TX_POOL] as string;
    const skipped = rng.int(4);
    const skippedAt: number[] = [];
    for (let i = 0; i < skipped; i++) skippedAt.push(boundary(rng.int(count + 1)));
    skippedAt.sort((x, y) => x - y);
    let nextSkipped = 0;
    let tx = -1;
    let txHash = b.name;

    for (let i = 0; i <= count; i++) {
      while (nextSkipped < skippedAt.length && skippedAt[nextSkipped] === i) {
        yield b.other(rng.pick(SKIPPED_TYPES));
        nextSkipped++;
      }
      if (i === extrasAt) for (const e of extras) yield b.wrap(e, extrasTx);
      const order = orderBuffer[i];
      if (order === undefined) continue;
      const orderTx = txOf[i] as number;
      if (orderTx !== tx) {
        tx = orderTx;
        // Transaction 0 is the block's own doing (expiries, auctions): it carries the block's hash.
        txHash = tx === 0 ? b.name : (txPool[nextTx++ % TX_POOL] as string);
      }
      yield b.wrap({ kind: 'order', order }, txHash);
    }
    yield b.wrap({ kind: 'endBlock', height });
    events += b.events;
    blocks++;
  }

  return whole ?? summary();
}
