/**
 * What the store keeps, as metrics (README "Metrics"), read from the store
 * when scraped: every HTTP process reads the same store, so under `serve
 * --workers N` the newest of what they say counts, not their sum.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { parseRetention, type RetentionStatus } from '../../domain/retention.js';
import type { QueryStore } from '../../store/store.js';
import { METRIC_PREFIX } from './server-metrics.js';

export function registerRetentionMetrics(registry: Registry, store: QueryStore): void {
  const read = store.retentionStatus?.bind(store);
  if (read === undefined) return;
  const registers = [registry];
  // One read per scrape for every metric below.
  let status: Promise<RetentionStatus | undefined> | undefined;
  const current = () => {
    status ??= read().catch(() => undefined).finally(() => setImmediate(() => (status = undefined)));
    return status;
  };
  const gauge = (name: string, help: string, value: (s: RetentionStatus) => number | undefined) => new Gauge({
    name: METRIC_PREFIX + name, help, aggregator: 'max', registers,
    async collect() {
      const s = await current();
      const v = s === undefined ? undefined : value(s);
      if (v === undefined) this.reset();
      else this.set(v);
    },
  });
  const counter = (name: string, help: string, value: (s: RetentionStatus) => number) => new Counter({
    name: METRIC_PREFIX + name, help, aggregator: 'max', registers,
    async collect() {
      const s = await current();
      this.reset();
      if (s !== undefined) this.inc(value(s));
    },
  });
  gauge('retention_window_seconds', 'The window of network time the writer keeps (0: archive, everything).', (s) => {
    const r = parseRetention(s.retention);
    return r === undefined || r.kind === 'archive' ? 0 : Number(r.ns) / 1e9;
  });
  gauge('oldest_kept_block_height', 'The oldest block whose changes are all kept (the first block stored, under archive).',
    (s) => (s.oldestKeptBlock === undefined ? undefined : Number(s.oldestKeptBlock.height)));
  gauge('oldest_kept_block_timestamp_seconds', 'Time of the oldest kept block, Unix seconds.',
    (s) => (s.oldestKeptBlock === undefined ? undefined : Number(s.oldestKeptBlock.time / 1000n) / 1e6));
  counter('pruned_rows_total', 'History and current rows pruned since the store was created.', (s) => Number(s.rowsPruned));
  counter('prune_seconds_total', 'Writer time spent pruning since the store was created.', (s) => s.pruneSeconds);
  gauge('prune_batch_longest_seconds', 'The longest prune batch since the store was created.', (s) => s.longestBatchSeconds);
  gauge('store_bytes', 'Bytes the store takes on disk: the embedded store\'s files, or the PostgreSQL database.', (s) => s.storeBytes);
}
