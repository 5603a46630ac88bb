#!/usr/bin/env node
/** The `ledger-query` command: serve, ingest, simulate, demo. */
import { existsSync, mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_ANSWER_CACHE_BYTES } from './api/answer-cache.js';
import { asLedgerError, IngestError, InternalError, UsageError } from './errors.js';
import { HTTP_FLAGS, HTTP_FLAGS_HELP, httpOptionsOf } from './http-flags.js';
import { checkEventFile, fileSource, plainFileSize } from './ingest/file-source.js';
import { incompleteBlockMessage, ingest, type IngestStats } from './ingest/ingester.js';
import { ProgressReporter } from './ingest/progress.js';
import type { OffsetUnit } from './ingest/source.js';
import { SOURCE_SPEC_HELP, openSourceSpec, parseSourceSpec } from './ingest/source-spec.js';
import { runServe } from './serve.js';
import { writeEventFile } from './simulate/write.js';
import { DEFAULT_DATA_DIR, openWriter } from './store/open.js';
import type { StoreConfig } from './store/store.js';

const USAGE = `ledger-query: exact, fast queries over a trading network's orders and multisig bundles

Usage:
  ledger-query serve    [--port N] [--host H] [STORE] [--workers N] [--source SPEC [--follow] [--allow-gaps] [--accept-unverified] | --no-ingest]
  ledger-query ingest   FILE|SPEC... [STORE] [--allow-gaps] [--accept-unverified]
  ledger-query simulate --out FILE [--blocks N] [--seed S] [--orders-per-block N]
  ledger-query demo     [--port N] [--host H] [STORE] [--workers N] [--blocks N] [--seed S]
  ledger-query COMMAND --help

STORE is --data-dir DIR (the embedded store, the default) or --database-url postgres://...
Environment: LEDGER_DATA_DIR (default ${DEFAULT_DATA_DIR}), DATABASE_URL, PORT (default 3008).
`;

const STORE_HELP = `--data-dir DIR  embedded store folder (env LEDGER_DATA_DIR, default ${DEFAULT_DATA_DIR})
  --database-url URL  a PostgreSQL database instead, postgres://user:password@host:port/db (env DATABASE_URL)`;

const HELP = {
  serve: `ledger-query serve [--port N] [--host H] [STORE] [--workers N] [--source SPEC [--follow] [--allow-gaps] [--accept-unverified] | --no-ingest]
  Serves the REST API (data node API v0.73 paths) over the store and, with
  --source, ingests live in a worker thread while serving. Without --no-ingest
  it creates or migrates the store first. With --database-url, several
  instances may share one database: of those given a --source, one ingests
  (the writer) and the others wait as standbys, serving queries, until it goes.
  --port N        port to listen on (env PORT, default 3008)
  --host H        address to bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
  ${STORE_HELP}
  --source SPEC   ${SOURCE_SPEC_HELP.replace(/\n/g, '\n                  ')}
  --follow        keep reading a file:// source as the core appends to it
  --allow-gaps    accept a jump in block height instead of stopping
  --accept-unverified  of a gzip file:// source cut short, store the whole
                  blocks of its last member too, though its CRC-32 and length
                  are missing (without it: nothing of that member, and the
                  ingestion fails, saying the file is cut)
  --no-ingest     queries only: never migrate or write (a PostgreSQL role with
                  SELECT rights, or a read replica, will do)
  --workers N     HTTP processes answering on the port (default: one per core,
                  ${availableParallelism()} here); ingestion stays in the first process
  --answer-cache-mb N  answers each HTTP process keeps until the next block
                  (default ${DEFAULT_ANSWER_CACHE_BYTES / 2 ** 20}; 0: none)
  Role (writer, standby, reader) and ingestion progress: GET /api/v2/ingest/status;
  health: GET /health; readiness for a load balancer: GET /ready.
${HTTP_FLAGS_HELP}`,
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
  file) exits 1; a directory or other non-file exits 2.
  --allow-gaps    accept a jump in block height instead of stopping
  --accept-unverified  of a gzip file cut short, store the whole blocks of its
                  last member too, though its CRC-32 and length are missing
  ${STORE_HELP}
`,
  simulate: `ledger-query simulate --out FILE [--blocks N] [--seed S] [--orders-per-block N]
  Writes a deterministic synthetic network's event file in the core's framing.
  --out FILE              file to write
  --blocks N              number of blocks (default 1000)
  --seed S                random seed (default 1)
  --orders-per-block N    average new orders per block (default 50)
`,
  demo: `ledger-query demo [--port N] [--host H] [STORE] [--workers N] [--blocks N] [--seed S]
  Simulates a network (once), ingests it and serves it, printing example queries.
  Defaults: --data-dir ./data/demo, --blocks 500, --seed 1.
`,
} as const;

const common = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, positionals = false) {
  try {
    return parseArgs({ args, options: { ...common, ...options }, allowPositionals: positionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

/** --answer-cache-mb in bytes; 0 turns the cache off. */
function cacheBytesOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--answer-cache-mb must be a whole number of MB (0: no cache), got "${value}"`);
  return Number(value) * 2 ** 20;
}

/** HTTP processes: --workers, else one per core. */
function httpProcessesOf(value: string | undefined): number {
  return positiveInt('workers', value, availableParallelism());
}

/** 0 asks the OS for a free port (tests, benchmarks). */
function port(value: string | undefined): number {
  const text = value ?? process.env.PORT;
  if (text === undefined) return 3008;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new UsageError(`--port must be from 0 to 65535, got "${text}"`);
  return Number(text);
}

const dataDirOf = (v: string | undefined, fallback = DEFAULT_DATA_DIR) => v ?? process.env.LEDGER_DATA_DIR ?? fallback;

/** The store the options name: PostgreSQL with --database-url (or DATABASE_URL), else the embedded store. */
function storeOf(values: { 'data-dir'?: string | undefined; 'database-url'?: string | undefined }, fallbackDir?: string): StoreConfig {
  if (values['database-url'] !== undefined && values['data-dir'] !== undefined) {
    throw new UsageError('give --data-dir or --database-url, not both');
  }
  // An explicit --data-dir wins over DATABASE_URL in the environment.
  const url = values['database-url'] ?? (values['data-dir'] === undefined ? process.env.DATABASE_URL || undefined : undefined);
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError(`--database-url must be a postgres:// URL, got "${url.replace(/\/\/[^@/]*@/, '//***@')}"`);
  }
  return { dataDir: dataDirOf(values['data-dir'], fallbackDir), databaseUrl: url };
}

async function serveCommand(args: string[]): Promise<void> {
  const { values } = parse(args, {
    port: { type: 'string' }, host: { type: 'string' }, source: { type: 'string' },
    follow: { type: 'boolean' }, 'allow-gaps': { type: 'boolean' }, 'no-ingest': { type: 'boolean' },
    'accept-unverified': { type: 'boolean' },
    workers: { type: 'string' }, 'answer-cache-mb': { type: 'string' }, ...HTTP_FLAGS,
  });
  if (values.help) return void process.stdout.write(HELP.serve);
  const http = httpOptionsOf(values);
  const readOnly = values['no-ingest'] ?? false;
  if (readOnly && values.source !== undefined) throw new UsageError('--no-ingest serves queries only: give it no --source');
  // Checked before anything starts; the worker opens the source itself.
  const kind = values.source === undefined ? undefined : parseSourceSpec(values.source).kind;
  if (values.follow && kind !== 'file') throw new UsageError('--follow goes with a --source file://PATH');
  if (values['accept-unverified'] && kind !== 'file') throw new UsageError('--accept-unverified goes with a --source file://PATH');
  const store = storeOf(values);
  const live = values.source === undefined ? undefined : {
    spec: values.source, follow: values.follow ?? false, allowGaps: values['allow-gaps'] ?? false,
    acceptUnverified: values['accept-unverified'] ?? false,
  };
  await runServe({
    store, host: values.host ?? '127.0.0.1', port: port(values.port), live, readOnly, httpProcesses: httpProcessesOf(values.workers),
    answerCacheBytes: cacheBytesOf(values['answer-cache-mb']), http,
  });
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

async function ingestFiles(args: string[], config: StoreConfig, flags: IngestFlags): Promise<void> {
  const sources = args.map((arg) => sourceOf(arg, flags));
  const store = await openWriter(config);
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
        });
      } finally {
        progress.end(); // the summary or the error starts on a fresh line
      }
      checkSomethingRead(stats, source.unit);
      const secs = Number(process.hrtime.bigint() - started) / 1e9;
      console.log(`${describe(stats)} in ${secs.toFixed(1)} s (${Math.round(stats.events / secs)} events/s)`);
      const incomplete = incompleteBlockMessage(stats, source.unit);
      if (incomplete) console.log(incomplete);
    }
  } finally {
    await store.close();
  }
}

async function ingestCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { 'allow-gaps': { type: 'boolean' }, 'accept-unverified': { type: 'boolean' } }, true);
  if (values.help) return void process.stdout.write(HELP.ingest);
  if (positionals.length === 0) throw new UsageError('ingest needs at least one FILE');
  await ingestFiles(positionals, storeOf(values), {
    allowGaps: values['allow-gaps'] ?? false, acceptUnverified: values['accept-unverified'] ?? false,
  });
}

async function simulateCommand(args: string[]): Promise<void> {
  const { values } = parse(args, {
    out: { type: 'string' }, blocks: { type: 'string' }, seed: { type: 'string' },
    'orders-per-block': { type: 'string' },
  });
  if (values.help) return void process.stdout.write(HELP.simulate);
  if (!values.out) throw new UsageError('simulate needs --out FILE');
  mkdirSync(dirname(values.out), { recursive: true });
  const summary = await writeEventFile(values.out, {
    blocks: positiveInt('blocks', values.blocks, 1000),
    seed: positiveInt('seed', values.seed, 1),
    ordersPerBlock: positiveInt('orders-per-block', values['orders-per-block'], 50),
  });
  // As in the network's own recording, the first height comes twice: a data node keeps the first.
  const repeated = summary.blocks > summary.heights;
  console.log(
    `${values.out}: ${summary.events} events, ${summary.heights} heights in ${summary.blocks} blocks` +
      `${repeated ? ' (the first twice, as a restarted network sends it)' : ''}, ` +
      `${summary.orders} orders, ${summary.bundles} bundles`,
  );
}

async function demoCommand(args: string[]): Promise<void> {
  const { values } = parse(args, {
    port: { type: 'string' }, host: { type: 'string' }, blocks: { type: 'string' }, seed: { type: 'string' },
    workers: { type: 'string' },
  });
  if (values.help) return void process.stdout.write(HELP.demo);
  const store = storeOf(values, join(DEFAULT_DATA_DIR, 'demo'));
  const file = join(store.dataDir, 'demo.events');
  if (!existsSync(file)) {
    await simulateCommand(['--out', file, '--blocks', values.blocks ?? '500', '--seed', values.seed ?? '1']);
  }
  await ingestFiles([file], store, { allowGaps: false, acceptUnverified: false });
  const address = await runServe({
    store, host: values.host ?? '127.0.0.1', port: port(values.port), readOnly: false, httpProcesses: httpProcessesOf(values.workers),
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

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve: serveCommand, ingest: ingestCommand, simulate: simulateCommand, demo: demoCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    await command(rest);
    return 0;
  } catch (e) {
    // Every expected fault is an error of the catalogue, which gives the exit status; the rest is a bug.
    const error = asLedgerError(e);
    const help = error instanceof UsageError && name in HELP ? HELP[name as keyof typeof HELP] : '';
    const what = error instanceof IngestError ? 'ingestion stopped: ' : error instanceof InternalError ? 'internal error (a bug; please report it): ' : '';
    process.stderr.write(`ledger-query ${name}: ${what}${error.message}\n${help}`);
    if (error instanceof InternalError) process.stderr.write(`${(error.cause as Error | undefined)?.stack ?? error.stack}\n`);
    return error.exitStatus;
  }
}

// serve and demo keep running on their open server; exitCode applies when the process ends.
process.exitCode = await main(process.argv.slice(2));
