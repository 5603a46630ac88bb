/**
 * GET /metrics of the real `serve`: with `--workers 2` one set of metrics
 * whichever process answers the scrape (every HTTP process's requests summed
 * by the primary, the last block the newest not the sum, ingestion the
 * primary's), scraped while requests are under way; with one process, the
 * same names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually, ingestStatus, runCli, startServe, type RunningServer } from '../support/cli.js';
import { parsePrometheusText, type Scrape } from '../support/prom-text.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-metrics-workers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const events = join(dir, 'net.events');
const sim = runCli(['simulate', '--out', events, '--blocks', '80', '--seed', '5', '--orders-per-block', '10']);
assert.equal(sim.status, 0, sim.stderr);

/** A GET on a connection of its own, so that the cluster may hand it to either process. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer in 10 s: ${url}`)));
    req.end();
  });
}

async function scrape(server: RunningServer): Promise<Scrape> {
  const res = await get(`${server.url}/metrics`);
  assert.equal(res.status, 200, res.body);
  return parsePrometheusText(res.body);
}

async function served(workers: number): Promise<{ server: RunningServer; events: number; height: number }> {
  const server = await startServe(['--data-dir', join(dir, `data-${workers}`), '--workers', String(workers), '--source', `file://${events}`]);
  let status = await ingestStatus(server);
  await eventually('ingestion to finish', async () => (status = await ingestStatus(server)).state === 'finished', 60_000);
  return { server, events: status.events!, height: Number(status.lastBlock!.height) };
}

test('serve --workers 2: every process\'s requests in one scrape, while requests are under way', async () => {
  const { server, events: read, height } = await served(2);
  try {
    const page = `${server.url}/api/v2/orders?pagination.first=2`;
    let sent = 0;
    // Load from 8 clients at once, and scrapes in the midst of it.
    const load = Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 25; i++) {
        assert.equal((await get(page)).status, 200);
        sent++;
      }
    });
    const scrapes = (async () => {
      for (let i = 0; i < 5; i++) {
        const m = await scrape(server);
        assert.ok(m.sum('ledger_query_http_requests_total', { route: '/api/v2/orders' }) <= 200);
      }
    })();
    await Promise.all([...load, scrapes]);
    assert.equal(sent, 200);
    // Each scrape, whichever process answers it, counts every process's requests.
    for (let i = 0; i < 4; i++) {
      const m = await scrape(server);
      assert.equal(m.value('ledger_query_http_requests_total', { route: '/api/v2/orders', status: '200' }), 200);
      assert.equal(m.value('ledger_query_http_request_duration_seconds_count', { route: '/api/v2/orders' }), 200);
      // One per block, not one per process.
      assert.equal(m.value('ledger_query_last_block_height'), height);
      assert.equal(m.value('ledger_query_ingest_events_total'), read);
      assert.equal(m.value('ledger_query_ingest_state', { state: 'finished' }), 1);
      assert.equal(m.value('ledger_query_ingest_lag_blocks'), 0);
      assert.equal(m.value('ledger_query_answer_cache_hits_total')! + m.value('ledger_query_answer_cache_misses_total')!, 200);
      // Node's own metrics, of both processes.
      assert.ok(m.value('process_resident_memory_bytes')! > 0);
    }
  } finally {
    await server.stop();
  }
});

test('serve with one process: the same metrics, ingestion\'s among them', async () => {
  const { server, events: read, height } = await served(1);
  try {
    for (let i = 0; i < 3; i++) assert.equal((await get(`${server.url}/api/v2/orders?pagination.first=2`)).status, 200);
    const m = await scrape(server);
    assert.equal(m.value('ledger_query_http_requests_total', { route: '/api/v2/orders', status: '200' }), 3);
    assert.equal(m.value('ledger_query_last_block_height'), height);
    assert.equal(m.value('ledger_query_ingest_events_total'), read);
    assert.equal(m.value('ledger_query_ingest_state', { state: 'finished' }), 1);
    assert.ok(m.value('ledger_query_ingest_lag_seconds')! > 0);
  } finally {
    await server.stop();
  }
});
