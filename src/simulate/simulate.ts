/**
 * A deterministic synthetic network: the BusEvent stream its core would
 * publish, block by block, for tests, the demo and benchmarks.
 */
import type { Order } from '../domain/order.js';
import { busEventTypeOf } from '../ingest/codec.js';
import type { BusEvent, EventBody } from '../ingest/events.js';
import { ValidatorNetwork } from './bundles.js';
import { OrderNetwork } from './network.js';
import { Random } from './random.js';

export interface SimulateOptions {
  seed: number;
  blocks: number;
  /** Average number of new orders per block. */
  ordersPerBlock?: number;
  chainId?: string;
  startHeight?: bigint;
  /** Unix ns of the first block. */
  startTime?: bigint;
  blockIntervalNs?: bigint;
}

export interface SimulationSummary {
  events: number;
  blocks: number;
  /** Distinct order ids. */
  orders: number;
  orderEvents: number;
  /** Signer-added events (bundles). */
  bundles: number;
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
const STREAM = { orders: 1, validators: 2, blocks: 3 } as const;

function checkOptions(opts: SimulateOptions): void {
  if (!Number.isSafeInteger(opts.seed)) throw new RangeError(`seed must be an integer, got ${opts.seed}`);
  if (!Number.isSafeInteger(opts.blocks) || opts.blocks < 0) throw new RangeError(`blocks must be a non-negative integer, got ${opts.blocks}`);
  const perBlock = opts.ordersPerBlock ?? DEFAULT_ORDERS_PER_BLOCK;
  if (!Number.isFinite(perBlock) || perBlock < 0) throw new RangeError(`ordersPerBlock must be >= 0, got ${perBlock}`);
  if ((opts.blockIntervalNs ?? DEFAULT_BLOCK_INTERVAL_NS) < 1n) throw new RangeError('blockIntervalNs must be at least 1');
  if ((opts.startHeight ?? 1n) < 1n) throw new RangeError('startHeight must be at least 1');
}

/**
 * Every event of the simulated chain, in order. The generator's return value
 * summarises what it produced.
 */
export function* simulateEvents(opts: SimulateOptions): Generator<BusEvent, SimulationSummary, undefined> {
  checkOptions(opts);
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID;
  const startHeight = opts.startHeight ?? 1n;
  const startTime = opts.startTime ?? DEFAULT_START_TIME;
  const blockIntervalNs = opts.blockIntervalNs ?? DEFAULT_BLOCK_INTERVAL_NS;
  const ordersPerBlock = opts.ordersPerBlock ?? DEFAULT_ORDERS_PER_BLOCK;

  const orders = new OrderNetwork(new Random(opts.seed, STREAM.orders), { ordersPerBlock, startTime, blockIntervalNs });
  const validators = new ValidatorNetwork(new Random(opts.seed, STREAM.validators), { startTime, blockIntervalNs });
  const rng = new Random(opts.seed, STREAM.blocks);

  const orderBuffer: Order[] = [];
  const extras: EventBody[] = [];
  let events = 0;

  for (let index = 0; index < opts.blocks; index++) {
    const height = startHeight + BigInt(index);
    const time = startTime + BigInt(index) * blockIntervalNs;
    const block = height.toString();
    let seq = 0;
    const wrap = (body: EventBody): BusEvent => {
      events++;
      return { id: `${block}-${seq++}`, block, type: busEventTypeOf(body.kind), chainId, ...body };
    };
    const other = (type: number): BusEvent => {
      events++;
      return { id: `${block}-${seq++}`, block, type, chainId, kind: 'other' };
    };

    yield wrap({ kind: 'beginBlock', height, timestamp: time, hash: rng.hex(64) });
    yield wrap({ kind: 'timeUpdate', timestamp: time });
    if (validators.startsEpoch(index)) yield other(EPOCH_EVENT_TYPE);

    orderBuffer.length = 0;
    extras.length = 0;
    orders.runBlock(index, orderBuffer);
    validators.runBlock(index, extras);

    // The multisig events land at one point among the block's transactions,
    // and a few skipped events anywhere.
    const extrasAt = rng.int(orderBuffer.length + 1);
    const skipped = rng.int(4);
    const skippedAt: number[] = [];
    for (let i = 0; i < skipped; i++) skippedAt.push(rng.int(orderBuffer.length + 1));
    skippedAt.sort((a, b) => a - b);
    let nextSkipped = 0;

    for (let i = 0; i <= orderBuffer.length; i++) {
      while (nextSkipped < skippedAt.length && skippedAt[nextSkipped] === i) {
        yield other(rng.pick(SKIPPED_TYPES));
        nextSkipped++;
      }
      if (i === extrasAt) for (const e of extras) yield wrap(e);
      const order = orderBuffer[i];
      if (order !== undefined) yield wrap({ kind: 'order', order });
    }
    yield wrap({ kind: 'endBlock', height });
  }

  return {
    events,
    blocks: opts.blocks,
    orders: orders.ordersCreated,
    orderEvents: orders.orderEvents,
    bundles: validators.signersAdded,
  };
}
