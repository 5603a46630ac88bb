/** `ledger-query demo`: simulates a network once, stores it and serves it. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfiguration } from '../config/load.js';
import { serve } from '../processes/serve.js';
import { logOf, storeOf } from './common.js';
import { helpOf } from './help.js';
import { ingestFiles } from './ingest.js';
import { simulate } from './simulate.js';

export async function demoCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('demo', args);
  if (config.help) return void process.stdout.write(helpOf('demo'));
  const v = config.values;
  const store = storeOf(v);
  const file = join(store.dataDir, 'demo.events');
  if (!existsSync(file)) await simulate(file, v.blocks, v.seed, v['orders-per-block']);
  await ingestFiles([file], store, { allowGaps: false, acceptUnverified: false, retention: v.retention });
  const address = await serve({
    store, host: v.host, port: v.port, readOnly: false, httpProcesses: v.workers, log: logOf(v),
  });
  const base = address.replace('[::1]', 'localhost').replace('127.0.0.1', 'localhost');
  console.log(`
ledger-query is serving the demo network at ${base} (Ctrl-C stops it). Try:
  curl '${base}/api/v2/orders?pagination.first=2&filter.statuses=STATUS_ACTIVE&pretty'
  curl '${base}/api/v2/orders?filter.liveOnly=true&pagination.first=3&pagination.newestFirst=false&pretty'
  curl '${base}/api/v2/orders?filter.types=TYPE_NETWORK&pagination.last=2&pretty'
  curl '${base}/api/v2/erc20/multisigcontrol/signer/added/bundles?pagination.first=2&pretty'
  curl '${base}/health'
`);
}
