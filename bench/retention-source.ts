/**
 * The retention benchmark's sources: a source's events handed over block
 * by block, so that the benchmark can stop before a block to measure (the
 * store's size, pages) and pace blocks as a live network sends them; and a
 * simulated network's events straight from the simulator, for a run too
 * long to keep as a file.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BusEvent } from '../src/ingest/events.js';
import type { EventBatch, EventSource, SourceEvent } from '../src/ingest/source.js';
import { simulateEvents, type SimulateOptions } from '../src/simulate/simulate.js';

export interface BlockHooks {
  /**
   * Before block `height` is handed over: may take its time (a measurement),
   * or say to pace it, returning the milliseconds to wait before it.
   */
  before(height: bigint): Promise<number | void>;
  /** Block `height` was handed over with `events` events, `orders` of them orders. */
  handed(height: bigint, events: number, orders: number, at: number): void;
}

/** `inner`'s events, a batch per block, each handed over once `hooks.before` lets it. */
export function blockByBlock(inner: EventSource, hooks: BlockHooks): EventSource {
  return {
    name: inner.name,
    unit: inner.unit,
    async *events(): AsyncIterable<EventBatch> {
      let block: SourceEvent[] = [];
      let height: bigint | undefined;
      const flush = async function* (): AsyncGenerator<EventBatch> {
        if (block.length === 0) return;
        if (height !== undefined) {
          const wait = await hooks.before(height);
          if (typeof wait === 'number' && wait > 0) await sleep(wait);
        }
        const events = block;
        block = [];
        yield { events };
        if (height !== undefined) {
          hooks.handed(height, events.length, events.filter((e) => e.event.kind === 'order').length, performance.now());
        }
      };
      for await (const batch of inner.events()) {
        for (const e of batch.events) {
          if (e.event.kind === 'beginBlock') {
            yield* flush();
            height = e.event.height;
          }
          block.push(e);
        }
      }
      yield* flush();
    },
  };
}

/** A simulated network's events as a source, without a file: the simulator's objects, no decoding. */
export function simulatedSource(options: SimulateOptions): EventSource {
  return {
    name: `simulated (seed ${options.seed})`,
    unit: 'message',
    async *events(): AsyncIterable<EventBatch> {
      let events: SourceEvent[] = [];
      let n = 0;
      for (const event of simulateEvents(options) as Iterable<BusEvent>) {
        events.push({ event, offset: n++ });
        if (events.length === 2048) {
          yield { events };
          events = [];
        }
      }
      if (events.length > 0) yield { events };
    },
  };
}
