#!/usr/bin/env node
/** The `ledger-query` command: serve, ingest, copy, simulate, demo, config. */
import { existsSync, mkdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { optionsHelp } from './config/help.js';
import { httpOptionsOf } from './config/http-settings.js';
import { loadConfiguration, type Configuration } from './config/load.js';
import { printConfiguration } from './config/print.js';
import { COMMANDS, type Command } from './config/setting.js';
import type { Values } from './config/settings.js';
import type { Retention } from './domain/retention.js';
import { version } from './config/version.js';
import { AbortError, asLedgerError, IngestError, InternalError, UsageError } from './errors.js';
import { checkEventFile, fileSource, plainFileSize } from './ingest/file-source.js';
import { incompleteBlockMessage, ingest, type IngestStats } from './ingest/ingester.js';
import { ProgressReporter } from './ingest/progress.js';
import type { OffsetUnit } from './ingest/source.js';
import { openSourceSpec } from './ingest/open-source.js';
import { parseSourceSpec } from './ingest/source-spec.js';
import { resolveLogFormat, type LogOptions } from './logging.js';
import { serve, type ServeOptions } from './processes/serve.js';
import { writeEventFile } from './simulate/write.js';
import { bar, StatusLine } from './status-line.js';
import { openWriter } from './store/open.js';
import { copyStore, describeStore } from './store/copy/copy-store.js';
import { copyStoreOf, type CopyStore } from './store/copy/open-copy.js';
import { CopyProgressReport } from './copy-progress.js';
import type { StoreConfig } from './store/store.js';

const USAGE = `ledger-query: exact, fast queries over a trading network's orders and multisig bundles

Usage:
  ledger-query serve    [--port N] [--host H] [STORE] [--workers N] [--source SPEC [--follow] [--allow-gaps] [--accept-unverified] | --no-ingest]
  ledger-query ingest   FILE|SPEC... [STORE] [--allow-gaps] [--accept-unverified]
  ledger-query copy     --from STORE --to STORE
  ledger-query simulate --out FILE [--blocks N] [--seed S] [--orders-per-block N]
  ledger-query demo     [--port N] [--host H] [STORE] [--workers N] [--blocks N] [--seed S]
  ledger-query config   [COMMAND] [OPTIONS]   COMMAND's effective configuration (default serve), passwords masked
  ledger-query COMMAND --help                 every option, with its variable and default
  ledger-query --version

STORE is --data-dir DIR (the embedded store, default ./data) or --database-url postgres://...;
copy's are a folder or a postgres:// URL each.
Every option is also a variable (LEDGER_QUERY_PORT for --port) and a key of a
config file (--config FILE, JSON or TOML): a flag wins over a variable, a
variable over the file, the file over the default.
`;

const ABOUT: Record<Command, string> = {
  serve: `ledger-query serve [--port N] [--host H] [STORE] [--workers N] [--source SPEC [--follow] [--allow-gaps] [--accept-unverified] | --no-ingest]
  Serves the REST API (data node API v0.73 paths) over the store and, with
  --source, ingests live on its ingest thread while serving. Without --no-ingest
  it creates or migrates the store first; an embedded store is created only
  with a --source (a folder without one is refused, naming it). With
  --database-url, several instances may share one database: of those given a
  --source, one ingests (the writer) and the others wait as standbys, serving
  queries, until it goes. Role (writer, standby, reader) and ingestion
  progress: GET /api/v2/ingest/status; health: GET /health; readiness for a
  load balancer: GET /ready. Limits apply per HTTP process (README "Limits").
`,
  ingest: `ledger-query ingest FILE|SPEC... [STORE] [--allow-gaps] [--accept-unverified]
  Stores the blocks of framed event files (uint32 size | uint64 seq | BusEvent),
  plain or gzip-compressed, regular files, pipes or FIFOs (e.g. <(gunzip -c f.gz)),
  or of any --source SPEC of serve (e.g. ndjson://events.ndjson, - for NDJSON on
  stdin). Blocks already stored are skipped, so re-running is harmless; a height
  seen again with another hash is skipped with a warning. Blocks seen again
  with the stored hash but other events are named, nothing more is written,
  and it exits 65 (README: "Rebuilding a store"). A corrupt record stops
  with its file, byte offset and block; a plain file that ends inside a block
  stores every whole block and names the incomplete one (exit 0). Nothing of an
  incomplete block is stored.
  A gzip file is checked before anything of it is stored: a member whose CRC-32
  or length does not match stores nothing of itself, and ingest exits 1 naming
  it (the members before it are stored); so does a gzip file cut short inside a
  member, unless --accept-unverified. A source with no whole event (an empty
  file) exits 1; a directory or other non-file exits 2. Stopped by Ctrl-C (or
  SIGTERM), it stores the blocks it has read, says up to which block the store
  holds, and exits 130: run it again to continue.
`,
  copy: `ledger-query copy --from STORE --to STORE
  Copies a store into a new one, in any direction: a folder (the embedded
  store) or a postgres:// URL each. The copy holds one block, the source's last
  when it starts, read from a snapshot while the source goes on serving and
  ingesting; it says which. Every table comes along, and each is checked
  (row count, and a hash of its rows in key order) before the target is
  called whole; a difference exits 65 naming the table. The target must be
  absent or empty; until the copy is checked it is marked incomplete, and
  every command refuses it (exit 66), so a copy cut short (Ctrl-C: exit 130,
  kill -9, a full disk, a lost connection) never serves part of the data: run
  the same command again, which starts over. serve --source on the copy goes
  on from the next block.
`,
  simulate: `ledger-query simulate --out FILE [--blocks N] [--seed S] [--orders-per-block N]
  Writes a deterministic synthetic network's event file in the core's framing.
`,
  demo: `ledger-query demo [--port N] [--host H] [STORE] [--workers N] [--blocks N] [--seed S]
  Simulates a network (once), ingests it and serves it, printing example queries.
`,
};

const helpOf = (command: Command) => `${ABOUT[command]}\n${optionsHelp(command)}`;

const CONFIG_HELP = `ledger-query config [COMMAND] [OPTIONS]
  Prints the configuration COMMAND (serve, ingest, copy, simulate or demo; default
  serve) would run with, given the same options, variables and config file:
  each setting's value and where it came from (a flag, a variable, the file,
  the default), as TOML, with passwords masked. Checks it as the command
  would: a bad value exits 2, naming it. \`ledger-query COMMAND --help\` lists
  the options.
`;

const storeOf = (v: Values): StoreConfig => ({ dataDir: v['data-dir'], databaseUrl: v['database-url'] });

const logOf = (v: Values): LogOptions => ({
  level: v['log-level'], requests: v['log-requests'], format: resolveLogFormat(v['log-format']),
});

/** What `serve` runs with, every setting checked against the others. */
function serveOptionsOf(v: Values): ServeOptions {
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

async function serveCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('serve', args);
  if (config.help) return void process.stdout.write(helpOf('serve'));
  await serve(serveOptionsOf(config.values));
}

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

interface IngestFlags {
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

/**
 * Ctrl-C (or SIGTERM) while ingesting stops it: the blocks read so far are
 * stored and the command says so. A second one ends the process at once:
 * stored blocks are committed, so nothing is lost but the group in flight.
 */
function stopOnSignal(): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const release = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  return { signal: controller.signal, release };
}

async function ingestFiles(args: string[], config: StoreConfig, flags: IngestFlags): Promise<void> {
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

async function ingestCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('ingest', args, { positionals: true });
  if (config.help) return void process.stdout.write(helpOf('ingest'));
  if (config.positionals.length === 0) throw new UsageError('ingest needs at least one FILE');
  const v = config.values;
  await ingestFiles(config.positionals, storeOf(v), {
    allowGaps: v['allow-gaps'], acceptUnverified: v['accept-unverified'], retention: v.retention,
  });
}

/** Writes the simulated network's file, with a progress line on a terminal, and says what it holds. */
async function simulate(out: string, blocks: number, seed: number, ordersPerBlock: number): Promise<void> {
  mkdirSync(dirname(out), { recursive: true });
  const line = process.stderr.isTTY ? new StatusLine(process.stderr) : undefined;
  const draw = (height: bigint, force = false) => line?.draw(() => {
    const done = Number(height) / blocks;
    return `${bar(done)} ${(done * 100).toFixed(0)}%  simulating block ${height} of ${blocks}`;
  }, force);
  let summary;
  try {
    summary = await writeEventFile(out, { blocks, seed, ordersPerBlock, onBlock: (height) => draw(height) });
    draw(BigInt(blocks), true);
  } finally {
    line?.end();
  }
  // As in the network's own recording, the first height comes twice: a data node keeps the first.
  const repeated = summary.blocks > summary.heights;
  console.log(
    `${out}: ${summary.events} events, ${summary.heights} heights in ${summary.blocks} blocks` +
      `${repeated ? ' (the first twice, as a restarted network sends it)' : ''}, ` +
      `${summary.orders} orders, ${summary.bundles} bundles`,
  );
}

async function simulateCommand(args: string[]): Promise<void> {
  const config = loadConfiguration('simulate', args);
  if (config.help) return void process.stdout.write(helpOf('simulate'));
  const v = config.values;
  if (v.out === undefined) throw new UsageError('simulate needs --out FILE');
  await simulate(v.out, v.blocks, v.seed, v['orders-per-block']);
}

/** The copy's scheduling priority (nice): below serve's, so that readers of the source keep their pace (BENCHMARKS.md, "Copying a store"). */
const COPY_NICENESS = 10;

async function copyCommand(args: string[]): Promise<void> {
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
    result = await copyStore(from, to, { signal, onProgress: (p) => report.update(p) });
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
function copyStoresOf(v: Values): { from: CopyStore; to: CopyStore } {
  if (v.from === undefined || v.to === undefined) throw new UsageError('copy needs --from STORE and --to STORE');
  if (v.from === v.to) throw new UsageError('copy needs two stores: --from and --to name the same one');
  return { from: copyStoreOf(v.from), to: copyStoreOf(v.to) };
}

async function demoCommand(args: string[]): Promise<void> {
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

/** Checks a configuration as its command would, short of running it. */
function check(config: Configuration): void {
  const v = config.values;
  if (config.command === 'serve') serveOptionsOf(v);
  if (config.command === 'simulate' && v.out === undefined) throw new UsageError('simulate needs --out FILE');
  if (config.command === 'copy') copyStoresOf(v);
}

async function configCommand(args: string[]): Promise<void> {
  const [first, ...rest] = args;
  const named = first !== undefined && (COMMANDS as readonly string[]).includes(first);
  const command: Command = named ? (first as Command) : 'serve';
  if (!named && (first === '--help' || first === '-h')) return void process.stdout.write(CONFIG_HELP);
  const config = loadConfiguration(command, named ? rest : args, { positionals: command === 'ingest' });
  if (config.help) return void process.stdout.write(`${CONFIG_HELP}\n${optionsHelp(command)}`);
  check(config);
  process.stdout.write(printConfiguration(config));
}

/** A Map, not an object: a name such as `toString` or `__proto__` must find nothing. */
const commands = new Map<string, (args: string[]) => Promise<void>>([
  ['serve', serveCommand], ['ingest', ingestCommand], ['copy', copyCommand], ['simulate', simulateCommand], ['demo', demoCommand],
  ['config', configCommand],
]);

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`ledger-query ${version()}\n`);
    return 0;
  }
  const command = commands.get(name);
  if (command === undefined) {
    const error = new UsageError(`unknown command ${JSON.stringify(name)}: one of ${[...commands.keys()].join(', ')} (ledger-query --help)`);
    process.stderr.write(`ledger-query: ${error.message}\n`);
    return error.exitStatus;
  }
  try {
    await command(rest);
    return 0;
  } catch (e) {
    // Every expected fault is an error of the catalogue, which gives the exit status; the rest is a bug.
    const error = asLedgerError(e);
    const what = error instanceof IngestError ? 'ingestion stopped: ' : error instanceof InternalError ? 'internal error (a bug; please report it): ' : '';
    process.stderr.write(`ledger-query ${name}: ${what}${error.message}\n`);
    if (error instanceof InternalError) process.stderr.write(`${(error.cause as Error | undefined)?.stack ?? error.stack}\n`);
    // A source stopped while it had nothing to read (a pipe) still holds its read open.
    if (error instanceof AbortError) process.exit(error.exitStatus);
    return error.exitStatus;
  }
}

// serve and demo keep running on their open server; exitCode applies when the process ends.
process.exitCode = await main(process.argv.slice(2));
