/**
 * Ingestion's metrics, read from its status when scraped: in the process
 * that ingests (the primary of `serve --workers N`, or the one process).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IngestStatus } from '../../domain/ingest-status.js';
import { METRIC_PREFIX } from './server-metrics.js';

const STATES: readonly IngestStatus['state'][] = ['starting', 'running', 'finished', 'stopped', 'failed'];

/** Registers ingestion's metrics in `registry`, read from `status()` at each scrape. */
export function registerIngestMetrics(registry: Registry, status: () => IngestStatus): void {
  const registers = [registry];
  const name = (n: string) => METRIC_PREFIX + n;
  const counter = (n: string, help: string, value: (s: IngestStatus) => number) => new Counter({
    name: name(n), help, registers,
    collect() {
      this.reset();
      this.inc(value(status()));
    },
  });
  counter('ingest_events_total', 'Events read from the source.', (s) => s.events);
  counter('ingest_blocks_total', 'Blocks stored by this ingestion.', (s) => s.blocksCommitted);
  new Gauge({
    name: name('ingest_events_per_second'), help: 'Events read per second, over the last 5 s.', registers,
    collect() {
      this.set(status().eventsPerSecond);
    },
  });
  new Gauge({
    name: name('ingest_lag_blocks'),
    help: 'Blocks read from the source and not stored yet (what the source has not delivered yet, only ingest_lag_seconds tells).',
    registers,
    collect() {
      const s = status();
      const read = s.heightRead;
      const stored = s.lastBlock?.height;
      this.set(read === undefined ? 0 : Math.max(0, Number(read - (stored ?? 0n))));
    },
  });
  new Gauge({
    name: name('ingest_state'), help: 'Ingestion\'s state: 1 for the one it is in.', labelNames: ['state'], registers,
    collect() {
      const now = status().state;
      for (const state of STATES) this.set({ state }, state === now ? 1 : 0);
    },
  });
}
