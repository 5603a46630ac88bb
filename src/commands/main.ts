/**
 * The `ledger-query` command line: which command runs, and how a fault ends
 * it (one line, the catalogue's exit status). ../cli.ts calls it once the
 * Node.js version is known to do.
 */
import { version } from '../config/version.js';
import { AbortError, asLedgerError, IngestError, InternalError, UsageError } from '../errors.js';

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

type Command = (args: string[]) => Promise<void>;

/**
 * Each command loaded when it is run: loading every command's modules (the
 * server's metrics and logging, the protobuf schema) cost a copy or an
 * ingest, and --version, a third of a second of CPU before any work. A Map,
 * not an object: a name such as `toString` or `__proto__` must find nothing.
 */
const commands = new Map<string, () => Promise<Command>>([
  ['serve', async () => (await import('./serve.js')).serveCommand],
  ['ingest', async () => (await import('./ingest.js')).ingestCommand],
  ['copy', async () => (await import('./copy.js')).copyCommand],
  ['simulate', async () => (await import('./simulate.js')).simulateCommand],
  ['demo', async () => (await import('./demo.js')).demoCommand],
  ['config', async () => (await import('./config.js')).configCommand],
]);

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`ledger-query ${version()}\n`);
    return 0;
  }
  const load = commands.get(name);
  if (load === undefined) {
    const error = new UsageError(`unknown command ${JSON.stringify(name)}: one of ${[...commands.keys()].join(', ')} (ledger-query --help)`);
    process.stderr.write(`ledger-query: ${error.message}\n`);
    return error.exitStatus;
  }
  try {
    const command = await load();
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
