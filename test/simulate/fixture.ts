/**
 * One simulated chain per test process: written to a temporary file with
 * writeEventFile and decoded back, so tests look at what ingestion will see.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Order } from '../../src/domain/order.js';
import type { BusEvent } from '../../src/ingest/events.js';
import type { SimulateOptions, SimulationSummary } from '../../src/simulate/simulate.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { readEventFile, type DecodedRecord } from './read-file.js';

export const FIXTURE: SimulateOptions = { seed: 7, blocks: 200 };

export interface OrderEventAt {
  height: bigint;
  blockTime: bigint;
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

/** Groups the order events of a stream by order id, with their block's height and time. */
export function indexOrders(events: readonly BusEvent[]): { blockTimes: Map<bigint, bigint>; orders: Map<string, OrderEventAt[]> } {
  const blockTimes = new Map<bigint, bigint>();
  const orders = new Map<string, OrderEventAt[]>();
  let height = 0n;
  let blockTime = 0n;
  for (const e of events) {
    if (e.kind === 'beginBlock') {
      height = e.height;
      blockTime = e.timestamp;
      blockTimes.set(height, blockTime);
    } else if (e.kind === 'order') {
      const seqInBlock = Number(e.id.split('-')[1]);
      const list = orders.get(e.order.id);
      const at = { height, blockTime, seqInBlock, order: e.order };
      if (list === undefined) orders.set(e.order.id, [at]);
      else list.push(at);
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
    return { path, summary, records, events, ...indexOrders(events) };
  })();
  return cached;
}

export const HEX64 = /^[0-9a-f]{64}$/;
