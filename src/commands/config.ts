/** `ledger-query config`: the configuration a command would run with, and where each value came from. */
import { optionsHelp } from '../config/help.js';
import { loadConfiguration, type Configuration } from '../config/load.js';
import { printConfiguration } from '../config/print.js';
import { COMMANDS, type Command } from '../config/setting.js';
import { UsageError } from '../errors.js';
import { copyStoresOf } from './copy.js';
import { serveOptionsOf } from './serve.js';

const CONFIG_HELP = `ledger-query config [COMMAND] [OPTIONS]
  Prints the configuration COMMAND (serve, ingest, copy, simulate or demo; default
  serve) would run with, given the same options, variables and config file:
  each setting's value and where it came from (a flag, a variable, the file,
  the default), as TOML, with passwords masked. Checks it as the command
  would: a bad value exits 2, naming it. \`ledger-query COMMAND --help\` lists
  the options.
`;

/** Checks a configuration as its command would, short of running it. */
function check(config: Configuration): void {
  const v = config.values;
  if (config.command === 'serve') serveOptionsOf(v);
  if (config.command === 'simulate' && v.out === undefined) throw new UsageError('simulate needs --out FILE');
  if (config.command === 'copy') copyStoresOf(v);
}

export async function configCommand(args: string[]): Promise<void> {
  const [first, ...rest] = args;
  const named = first !== undefined && (COMMANDS as readonly string[]).includes(first);
  const command: Command = named ? (first as Command) : 'serve';
  if (!named && (first === '--help' || first === '-h')) return void process.stdout.write(CONFIG_HELP);
  const config = loadConfiguration(command, named ? rest : args, { positionals: command === 'ingest' });
  if (config.help) return void process.stdout.write(`${CONFIG_HELP}\n${optionsHelp(command)}`);
  check(config);
  process.stdout.write(printConfiguration(config));
}
