/**
 * One simulated chain per test process: written to a temporary file with
 * writeEventFile and decoded back, so tests look at what ingestion will see.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Order } from '../../src/domain/order.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { DEFAULT_BLOCK_INTERVAL_NS, type SimulateOptions, type SimulationSummary } from '../../src/simulate/simulate.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { readEventFile, type DecodedRecord } from './read-file.js';

export const FIXTURE: SimulateOptions = { seed: 7, blocks: 200 };

export interface OrderEventAt {
  height: bigint;
  blockTime: bigint;
  /** The time of the next block: everything of this block happens before it. */
  nextBlockTime: bigint;
  /** The event's transaction hash, as the generator made it. */
  txHash: string;
  /** Position of the event in its block. */
  seqInBlock: number;
  order: Order;
}

export interface Chain {
  path: string;
  summary: SimulationSummary;
  records: DecodedRecord[];
  events: BusEvent[];
  /** Block time by height. */
  blockTimes: Map<bigint, bigint>;
  /** Every event of each order, in stream order. */
  orders: Map<string, OrderEventAt[]>;
}

let dir: string | undefined;

export function tempDir(): string {
  if (dir === undefined) {
    const created = mkdtempSync(join(tmpdir(), 'lq-sim-'));
    dir = created;
    process.on('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  return dir;
}

/**
 * Groups the order events of a stream by order id, with their block's height
 * and time. `txHashes` are the events' transaction hashes, by index, where the
 * events lack them (decoded ones).
 */
export function indexOrders(
  events: readonly BusEvent[],
  txHashes?: readonly string[],
): { blockTimes: Map<bigint, bigint>; orders: Map<string, OrderEventAt[]> } {
  const blockTimes = new Map<bigint, bigint>();
  const orders = new Map<string, OrderEventAt[]>();
  let height = 0n;
  let blockTime = 0n;
  events.forEach((e, i) => {
    if (e.kind === 'beginBlock') {
      height = e.height;
      blockTime = e.timestamp;
      blockTimes.set(height, blockTime);
    } else if (e.kind === 'order') {
      const seqInBlock = Number(e.id.split('-')[1]);
      const list = orders.get(e.order.id);
      const txHash = txHashes?.[i] ?? e.txHash ?? '';
      const at = { height, blockTime, nextBlockTime: 0n, txHash, seqInBlock, order: e.order };
      if (list === undefined) orders.set(e.order.id, [at]);
      else list.push(at);
    }
  });
  // The last block has no next one: its nominal span and the largest jitter bound it.
  const last = [...blockTimes.keys()].reduce((a, b) => (b > a ? b : a), 0n);
  for (const list of orders.values()) {
    for (const at of list) {
      at.nextBlockTime = blockTimes.get(at.height + 1n) ?? (blockTimes.get(last) ?? 0n) + 2n * DEFAULT_BLOCK_INTERVAL_NS;
    }
  }
  return { blockTimes, orders };
}

let cached: Promise<Chain> | undefined;

export function chain(): Promise<Chain> {
  cached ??= (async () => {
    const path = join(tempDir(), 'fixture.events');
    const summary = await writeEventFile(path, FIXTURE);
    const records = readEventFile(path);
    const events = records.map((r) => r.event);
    return { path, summary, records, events, ...indexOrders(events, records.map((r) => r.txHash)) };
  })();
  return cached;
}

export const HEX64 = /^[0-9a-f]{64}$/;
/** A hash as the core names blocks and transactions: 64 upper-case hex digits. */
export const UPPER_HEX64 = /^[0-9A-F]{64}$/;

/** The events of a stream, block by block (BeginBlock .. EndBlock). */
export function blocksOf(events: readonly BusEvent[]): BusEvent[][] {
  const blocks: BusEvent[][] = [];
  for (const e of events) {
    if (e.kind === 'beginBlock') blocks.push([]);
    const current = blocks[blocks.length - 1];
    if (current === undefined) throw new Error(`event ${e.id} comes before any BeginBlock`);
    current.push(e);
  }
  return blocks;
}

/** Unix ns truncated to whole microseconds, rounding down, as the original keeps times. */
export function micros(ns: bigint): bigint {
  return ns - (((ns % 1000n) + 1000n) % 1000n);
}
