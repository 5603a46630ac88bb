/** `ledger-query ingest`: stores the blocks of event files and sources, saying what it stored. */
import { loadConfiguration } from '../config/load.js';
import type { Retention } from '../domain/retention.js';
import { AbortError, IngestError, UsageError } from '../errors.js';
import { checkEventFile, fileSource, plainFileSize } from '../ingest/file-source.js';
import { incompleteBlockMessage, ingest, type IngestStats } from '../ingest/ingester.js';
import { openSourceSpec } from '../ingest/open-source.js';
import { ProgressReporter } from '../ingest/progress.js';
import type { OffsetUnit } from '../ingest/source.js';
import { parseSourceSpec } from '../ingest/source-spec.js';
import { openWriter } from '../store/open.js';
import type { StoreConfig } from '../store/store.js';
import { stopOnSignal, storeOf } from './common.js';
import { helpOf } from './help.js';

function describe(s: IngestStats): string {
  const skipped = Object.entries(s.skippedByType).map(([t, n]) => `type ${t}: ${n}`).join(', ');
  const last = s.lastBlock ? `last block ${s.lastBlock.height}` : 'no block stored';
  return (
    `${s.source}: ${s.events} events, ${s.blocksCommitted} blocks stored, ` +
    `${s.blocksAlreadyStored} already stored${s.blocksWithOtherHash ? ` (${s.blocksWithOtherHash} with another hash)` : ''}, ${last}` +
    (skipped ? `; skipped event types (${skipped})` : '') +
    (s.eventsOutsideBlock ? `; ${s.eventsOutsideBlock} events outside a block` : '')
  );
}

export interface IngestFlags {
  allowGaps: boolean;
  acceptUnverified: boolean;
  retention: Retention;
}

/**
 * A plain path is a framed event file; anything with a scheme (or -) is a
 * source spec. Files are checked before anything is read: one that does not
 * exist or is not a file (a directory) is a usage error naming it.
 */
function sourceOf(arg: string, { acceptUnverified }: IngestFlags) {
  const spec = arg === '-' || /^[a-z]+:\/\//.test(arg) ? parseSourceSpec(arg) : undefined;
  if (spec === undefined) checkEventFile(arg);
  else if (spec.kind !== 'socket' && spec.path !== '-') checkEventFile(spec.path);
  if (spec !== undefined) return { source: openSourceSpec(arg, { acceptUnverified }), bytes: undefined };
  return { source: fileSource(arg, { acceptUnverified }), bytes: plainFileSize(arg) };
}

/**
 * Ingestion that read no whole event did nothing a user asked for (an empty
 * file, one cut inside its first record): an error, so that a script notices.
 */
function checkSomethingRead(stats: IngestStats, unit: OffsetUnit): void {
  if (stats.events > 0) return;
  const why = stats.incompleteBlock ? 'it holds no whole event: it ends inside its first record' : 'it holds no event: it is empty';
  throw IngestError.at(why, { source: stats.source, offset: 0, unit }, undefined);
}

/** Said when Ctrl-C stopped ingestion: what the store holds, and that running it again continues. */
function stoppedMessage(stats: IngestStats): string {
  const held = stats.lastBlock === undefined
    ? 'the store holds no block yet'
    : `the store holds every block up to ${stats.lastBlock.height} (${stats.blocksCommitted} stored now)`;
  return `stopped on request while reading ${stats.source}: ${held}; run the same command again to continue from there`;
}

export async function ingestFiles(args: string[], config: StoreConfig, flags: IngestFlags): Promise<void> {
  const sources = args.map((arg) => sourceOf(arg, flags));
  const store = await openWriter(config, {
    retention: flags.retention,
    onNotice: (message) => process.stderr.write(`ledger-query ingest: ${message}\n`),
  });
  const { signal, release } = stopOnSignal();
  try {
    for (const { source, bytes } of sources) {
      const progress = new ProgressReporter(process.stderr, bytes);
      const started = process.hrtime.bigint();
      let stats: IngestStats;
      try {
        stats = await ingest(source, store, {
          allowGaps: flags.allowGaps,
          onBlock: (_b, s, position) => progress.update(s, position),
          onWarning: (message) => {
            progress.end();
            process.stderr.write(`ledger-query ingest: warning: ${message}\n`);
          },
        }, signal);
      } finally {
        progress.end(); // the summary or the error starts on a fresh line
      }
      if (signal.aborted) throw new AbortError(stoppedMessage(stats));
      checkSomethingRead(stats, source.unit);
      const secs = Number(process.hrtime.bigint() - started) / 1e9;
      console.log(`${describe(stats)} in ${secs.toFixed(1)} s (${Math.round(stats.events / secs)} events/s)`);
      const incomplete = incompleteBlockMessage(stats, source.unit);
      if (incomplete) console.log(incomplete);
    }
    // Ends once nothing older than the window at the last block is answered any more.
    await store.prune();
  } finally {
    release();
    await store.close();
  }
}

export async function ingestCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('ingest', args, { positionals: true });
  if (config.help) return void process.stdout.write(helpOf('ingest'));
  if (config.positionals.length === 0) throw new UsageError('ingest needs at least one FILE');
  const v = config.values;
  await ingestFiles(config.positionals, storeOf(v), {
    allowGaps: v['allow-gaps'], acceptUnverified: v['accept-unverified'], retention: v.retention,
  });
}
