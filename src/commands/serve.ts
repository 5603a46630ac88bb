/** `ledger-query serve`: its settings checked against each other, then the processes of ./../processes/serve.ts. */
import { httpOptionsOf } from '../config/http-settings.js';
import { loadConfiguration } from '../config/load.js';
import type { Values } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { parseSourceSpec } from '../ingest/source-spec.js';
import { serve, type ServeOptions } from '../processes/serve.js';
import { logOf, storeOf } from './common.js';
import { helpOf } from './help.js';

/** What `serve` runs with, every setting checked against the others. */
export function serveOptionsOf(v: Values): ServeOptions {
  const http = httpOptionsOf(v);
  const readOnly = v['no-ingest'];
  if (readOnly && v.source !== undefined) throw new UsageError('--no-ingest serves queries only: give it no --source');
  const kind = v.source === undefined ? undefined : parseSourceSpec(v.source).kind;
  if (v.follow && kind !== 'file') throw new UsageError('--follow goes with a --source file://PATH');
  if (v['accept-unverified'] && kind !== 'file') throw new UsageError('--accept-unverified goes with a --source file://PATH');
  const live = v.source === undefined ? undefined : {
    spec: v.source, follow: v.follow, allowGaps: v['allow-gaps'], acceptUnverified: v['accept-unverified'], retention: v.retention,
  };
  return {
    store: storeOf(v), host: v.host, port: v.port, live, readOnly, httpProcesses: v.workers,
    answerCacheBytes: v['answer-cache-mb'] * 2 ** 20, http, log: logOf(v),
  };
}

export async function serveCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('serve', args);
  if (config.help) return void process.stdout.write(helpOf('serve'));
  await serve(serveOptionsOf(config.values));
}
