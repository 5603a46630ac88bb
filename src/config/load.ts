/**
 * A command's configuration, read from its flags, the environment and a
 * config file (`--config FILE`, JSON or TOML by its extension), with one
 * precedence: a flag over a variable over the file over the default. Every
 * value is read and checked before the command does anything: a key or a
 * LEDGER_QUERY_ variable no setting has, or a value a setting refuses, is a
 * usage error naming it and where it came from.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { UsageError } from '../errors.js';
import { HTTP_PROCESS_SETUP } from '../processes/protocol.js';
import { SETTING_NAMES, settingOf, settingsOf, type SettingName, type Values } from './settings.js';
import { ENV_PREFIX, envName, type Command, type FileKind } from './setting.js';

/** Where a value came from. */
export type Origin =
  | { from: 'flag' }
  | { from: 'env'; variable: string }
  | { from: 'file'; path: string }
  | { from: 'default' }
  /** Given, but another setting given by a higher source wins (--data-dir over a database URL in a file). */
  | { from: 'overridden'; by: string };

/** The variable that names the config file when --config does not. */
export const CONFIG_ENV = `${ENV_PREFIX}CONFIG`;

/** Variables of ours that are no setting: the config file's, and what the primary hands its HTTP processes. */
const NOT_SETTINGS = new Set([CONFIG_ENV, HTTP_PROCESS_SETUP]);

/** How a source ranks: the higher wins. */
const RANK = { flag: 3, env: 2, file: 1, default: 0, overridden: 0 } as const;

export function originLabel(name: string, origin: Origin): string {
  switch (origin.from) {
    case 'flag': return `--${name}`;
    case 'env': return origin.variable;
    case 'file': return `${name} in ${origin.path}`;
    case 'default': return 'default';
    case 'overridden': return `not used: ${origin.by} wins`;
  }
}

export interface Configuration {
  command: Command;
  values: Values;
  /** Where each setting's value came from; undefined for a setting without a value. */
  origins: Partial<Record<SettingName, Origin>>;
  positionals: string[];
  /** --help was given: nothing else was read. */
  help: boolean;
  /** The config file read, if any. */
  file: string | undefined;
}

export interface LoadOptions {
  /** The command takes arguments (ingest's files). */
  positionals?: boolean;
  env?: NodeJS.ProcessEnv;
}

/** A value as given, before it is read: a text, and where it came from. */
interface Given {
  text: string;
  origin: Origin;
}

export function loadConfiguration(command: Command, args: string[], options: LoadOptions = {}): Configuration {
  const env = options.env ?? process.env;
  const names = settingsOf(command);
  const flagOptions: NonNullable<ParseArgsConfig['options']> = {
    config: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  };
  for (const name of names) flagOptions[name] = { type: settingOf(name).flag };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: flagOptions, allowPositionals: options.positionals ?? false, strict: true });
  } catch (e) {
    throw new UsageError(flagError(e as NodeJS.ErrnoException, command));
  }
  const flags = parsed.values as Record<string, string | boolean | undefined>;
  const values = {} as Record<SettingName, unknown>;
  const empty: Configuration = { command, values: values as Values, origins: {}, positionals: parsed.positionals, help: true, file: undefined };
  if (flags.help === true) return empty;

  const fileFlag = flags.config as string | undefined;
  const file = fileFlag ?? (nonEmpty(env[CONFIG_ENV]));
  const fromFile = file === undefined ? new Map<SettingName, Given>() : readConfigFile(file, fileFlag === undefined ? CONFIG_ENV : '--config');
  const fromEnv = readEnvironment(env, command);

  const origins: Partial<Record<SettingName, Origin>> = {};
  for (const name of SETTING_NAMES) {
    const setting = settingOf(name);
    const flag = flags[name];
    const given: Given | undefined = flag !== undefined && flag !== false
      ? { text: String(flag), origin: { from: 'flag' } }
      : fromEnv.get(name) ?? fromFile.get(name);
    if (given === undefined) {
      values[name] = setting.default(command);
      if (values[name] !== undefined) origins[name] = { from: 'default' };
      continue;
    }
    try {
      values[name] = setting.parse(given.text);
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${originLabel(name, given.origin)}: ${e.message}`);
      throw e;
    }
    origins[name] = given.origin;
  }
  pickStore(values, origins);
  return { command, values: values as Values, origins, positionals: parsed.positionals, help: false, file };
}

/** parseArgs' refusal, in our words: an unknown flag with the nearest one, and where the list is. */
function flagError(e: NodeJS.ErrnoException, command: Command): string {
  const unknown = e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-[^']*)'/.exec(e.message)?.[1] : undefined;
  if (unknown === undefined) return e.message;
  const names = settingsOf(command);
  const near = suggestion(unknown.replace(/^-+/, '').split('=')[0]!, (name) => `--${name}`, names);
  return `unknown option ${unknown}${near} (ledger-query ${command} --help lists them)`;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}

/**
 * Of --data-dir and --database-url, the one given by the higher source
 * wins. Both given by flags, or both in the file, contradict each other;
 * both in the environment, the database URL wins, as it always has.
 */
function pickStore(values: Record<SettingName, unknown>, origins: Partial<Record<SettingName, Origin>>): void {
  const dir = origins['data-dir'];
  const url = origins['database-url'];
  if (dir === undefined || url === undefined || dir.from === 'default') return;
  if (RANK[dir.from] === RANK[url.from] && dir.from !== 'env') {
    throw new UsageError(`give data-dir or database-url, not both (${originLabel('data-dir', dir)}, ${originLabel('database-url', url)})`);
  }
  if (RANK[dir.from] > RANK[url.from]) {
    values['database-url'] = undefined;
    origins['database-url'] = { from: 'overridden', by: originLabel('data-dir', dir) };
  }
}

/**
 * The values the environment gives: LEDGER_QUERY_NAME for every setting, and
 * for the command's own settings the variables earlier versions read
 * (DATABASE_URL, PORT, ...), below it. An empty variable counts as unset.
 * A LEDGER_QUERY_ variable of no setting is a usage error: a typo.
 */
function readEnvironment(env: NodeJS.ProcessEnv, command: Command): Map<SettingName, Given> {
  const byVariable = new Map(SETTING_NAMES.map((name) => [envName(name), name]));
  for (const variable of Object.keys(env)) {
    if (variable.startsWith(ENV_PREFIX) && !NOT_SETTINGS.has(variable) && !byVariable.has(variable)) {
      throw new UsageError(`${variable}: no setting has this name${suggestion(variable.slice(ENV_PREFIX.length).toLowerCase().replaceAll('_', '-'), (n) => envName(n))}`);
    }
  }
  const given = new Map<SettingName, Given>();
  for (const name of SETTING_NAMES) {
    const setting = settingOf(name);
    const candidates = [envName(name), ...(setting.legacyEnv !== undefined && setting.commands.includes(command) ? [setting.legacyEnv] : [])];
    for (const variable of candidates) {
      const text = nonEmpty(env[variable]);
      if (text === undefined) continue;
      given.set(name, { text, origin: { from: 'env', variable } });
      break;
    }
  }
  return given;
}

/** The settings a config file gives; `via` names what named it (--config or the variable). */
function readConfigFile(path: string, via: string): Map<SettingName, Given> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`${via}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'not a file' : 'cannot read'}: ${path}`);
  }
  const extension = extname(path).toLowerCase();
  let table: unknown;
  try {
    if (extension === '.json') table = JSON.parse(text);
    else if (extension === '.toml') table = parseToml(text);
    else throw new UsageError(`${via}: ${path} is neither .json nor .toml`);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    // TOML's errors show the line in a frame below their first line.
    const { line, column } = e as { line?: number; column?: number };
    const where = line === undefined ? '' : ` (line ${line}${column === undefined ? '' : `, column ${column}`})`;
    const reason = `${(e as Error).message.split('\n')[0]}${where}`;
    throw new UsageError(`${path}: not valid ${extension === '.json' ? 'JSON' : 'TOML'}: ${reason}`);
  }
  if (typeof table !== 'object' || table === null || Array.isArray(table)) {
    throw new UsageError(`${path}: must hold a table of settings (key = value)`);
  }
  const given = new Map<SettingName, Given>();
  const known = new Set<string>(SETTING_NAMES);
  for (const [key, value] of Object.entries(table)) {
    if (!known.has(key)) throw new UsageError(`${path}: unknown key "${key}"${suggestion(key, (n) => n)}`);
    const name = key as SettingName;
    const origin: Origin = { from: 'file', path };
    const text = fileValueText(value, settingOf(name).fileKind);
    if (text === undefined) {
      throw new UsageError(`${originLabel(name, origin)}: must be ${KIND_WORDS[settingOf(name).fileKind]}, got ${JSON.stringify(value) ?? String(value)}`);
    }
    given.set(name, { text, origin });
  }
  return given;
}

const KIND_WORDS: Record<FileKind, string> = {
  text: 'a string', number: 'a number', boolean: 'true or false', list: 'a list of strings, or a string',
};

/** A file's value as the text a flag would give, if it is of a kind the setting takes. */
function fileValueText(value: unknown, kind: FileKind): string | undefined {
  if (typeof value === 'string' && kind !== 'boolean') return value;
  if (typeof value === 'number' && kind === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'bigint' && kind === 'number') return String(value);
  if (typeof value === 'boolean' && kind === 'boolean') return String(value);
  if (Array.isArray(value) && kind === 'list' && value.every((v) => typeof v === 'string')) {
    return value.length === 0 ? 'none' : value.join(',');
  }
  return undefined;
}

/** `: did you mean "X"?` for the name closest to `given` (at most two edits away), else nothing. */
function suggestion(given: string, spell: (name: SettingName) => string, among: readonly SettingName[] = SETTING_NAMES): string {
  let best: { name: SettingName; distance: number } | undefined;
  for (const name of among) {
    const distance = editDistance(given, name);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best === undefined ? '' : `: did you mean ${spell(best.name)}?`;
}

/** Levenshtein distance: a dozen lines, not worth a dependency. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
