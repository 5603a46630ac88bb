/**
 * One set of metrics for `serve --workers N`: every HTTP process counts in a
 * registry of its own, and GET /metrics, whichever process it reaches, asks
 * the primary, which gathers every HTTP process's registry (prom-client's
 * AggregatorRegistry over node:cluster's channel: counters and histograms
 * summed, the last block the newest of them) and adds its own: ingestion's.
 */
import { AggregatorRegistry, Registry } from 'prom-client';
import type { IngestStatus } from '../../domain/ingest-status.js';
import { registerIngestMetrics } from './ingest-metrics.js';

/** In an HTTP process: the registry its server counts in, which the primary is answered from. */
export function httpProcessRegistry(): Registry {
  const registry = new Registry();
  AggregatorRegistry.setRegistries([registry]);
  // Constructed in a worker, it answers the primary's requests for the registries set above.
  new AggregatorRegistry();
  return registry;
}

/** In the primary: every process's metrics in the text format, for an HTTP process that was asked. */
export function primaryScrape(ingestStatus: (() => IngestStatus) | undefined): () => Promise<string> {
  const own = new Registry();
  if (ingestStatus !== undefined) registerIngestMetrics(own, ingestStatus);
  const httpProcesses = new AggregatorRegistry();
  return async () => {
    const [mine, theirs] = await Promise.all([own.metrics(), httpProcesses.clusterMetrics()]);
    return mine + theirs;
  };
}
