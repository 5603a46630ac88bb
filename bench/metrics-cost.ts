/**
 * What counting a request costs (src/api/metrics/server-metrics.ts): the
 * per-request work the fast path adds for a cached answer (a timer, the
 * route's counts by status, its latency's bucket, in plain numbers), in ns
 * per request, measured in process on a request and response of Node's
 * own, beside the same without it. Usage: node dist/bench/metrics-cost.js [requests]
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Registry } from 'prom-client';
import { ServerMetrics } from '../src/api/metrics/server-metrics.js';
import type { QueryStore } from '../src/store/store.js';

const N = Number(process.argv[2] ?? 200_000);
const store = { lastBlock: async () => undefined } as unknown as QueryStore;
const metrics = new ServerMetrics(new Registry(), { store, cache: undefined });
metrics.addRoute('/api/v2/orders');

function request(counted: boolean): void {
  const req = new IncomingMessage(new Socket());
  req.url = '/api/v2/orders?pagination.first=50';
  const res = new ServerResponse(req);
  const started = performance.now();
  res.emit('finish');
  if (counted) metrics.answered('/api/v2/orders', res.statusCode, started);
}

function run(counted: boolean): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) request(counted);
  return Number(process.hrtime.bigint() - t0) / N;
}

const samples: { without: number; with: number }[] = [];
for (let round = 0; round < 7; round++) samples.push({ without: run(false), with: run(true) });
const added = samples.map((s) => s.with - s.without).sort((a, b) => a - b);
const median = added[Math.floor(added.length / 2)]!;
process.stdout.write(`rounds (ns/request without, with): ${samples.map((s) => `${s.without.toFixed(0)}/${s.with.toFixed(0)}`).join(' ')}\n`);
process.stdout.write(`added by counting a request: median ${median.toFixed(0)} ns (min ${added[0]!.toFixed(0)}, max ${added.at(-1)!.toFixed(0)})\n`);
