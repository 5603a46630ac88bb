/** `ledger-query copy`: one store into a new one, checked, while the source goes on. */
import { setPriority } from 'node:os';
import { loadConfiguration } from '../config/load.js';
import type { Values } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { copyStore, describeStore } from '../store/copy/copy-store.js';
import { copyStoreOf, type CopyStore } from '../store/copy/open-copy.js';
import { stopOnSignal } from './common.js';
import { CopyProgressReport } from './copy-progress.js';
import { helpOf } from './help.js';

/** The copy's scheduling priority (nice): below serve's, so that readers of the source keep their pace (BENCHMARKS.md, "Copying a store"). */
const COPY_NICENESS = 10;

export async function copyCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('copy', args);
  if (config.help) return void process.stdout.write(helpOf('copy'));
  const { from, to } = copyStoresOf(config.values);
  // A copy is a batch job beside a source that serves: on a busy machine the server's processes go first.
  setPriority(COPY_NICENESS);
  const report = new CopyProgressReport(process.stderr);
  const { signal, release } = stopOnSignal();
  const started = process.hrtime.bigint();
  let result;
  try {
    result = await copyStore(from, to, { signal, maxRowsPerSecond: config.values['max-rate'], onProgress: (p) => report.update(p) });
  } finally {
    report.end();
    release();
  }
  const secs = Number(process.hrtime.bigint() - started) / 1e9;
  const block = result.block === undefined ? 'no block (the source holds none)' : `block ${result.block.height}`;
  console.log(
    `copied ${describeStore(from)} to ${describeStore(to)}: ${block}, ${result.rows} rows in ${result.tables.length} tables, ` +
      `checked, in ${secs.toFixed(1)} s (${Math.round(result.rows / Math.max(result.seconds.rows, 1e-9))} rows/s loading)`,
  );
}

/** copy's two stores, both given and not the same. */
export function copyStoresOf(v: Values): { from: CopyStore; to: CopyStore } {
  if (v.from === undefined || v.to === undefined) throw new UsageError('copy needs --from STORE and --to STORE');
  if (v.from === v.to) throw new UsageError('copy needs two stores: --from and --to name the same one');
  return { from: copyStoreOf(v.from), to: copyStoreOf(v.to) };
}
