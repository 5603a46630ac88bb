/**
 * What one setting of the configuration is: its name (the flag `--NAME`,
 * the file key `NAME`, the environment variable `LEDGER_QUERY_NAME`), the
 * commands that take it, how its text is read and checked, and its default.
 * The settings themselves are declared in ./settings.ts; ./load.ts reads
 * them from flags, the environment and a file.
 */
import { UsageError } from '../errors.js';

export const COMMANDS = ['serve', 'ingest', 'copy', 'simulate', 'demo'] as const;
export type Command = (typeof COMMANDS)[number];

/** How a config file may give the value: as text, a number, a boolean, or a list (an array, or text with commas). */
export type FileKind = 'text' | 'number' | 'boolean' | 'list';

export interface Setting<T> {
  /** parseArgs' type of the flag: a boolean flag takes no value. */
  readonly flag: 'string' | 'boolean';
  /** The value's name in the help: N, S, DIR, URL. */
  readonly placeholder: string;
  /** What it does, for --help and the README; may run over several lines. */
  readonly help: string;
  readonly commands: readonly Command[];
  readonly fileKind: FileKind;
  /** The value of a text (a flag's, a variable's, a file's value as text); throws UsageError saying why it is not one. */
  readonly parse: (text: string) => T;
  /** The value when nobody gives one, per command; undefined: none (the setting is off, or its meaning is said in the help). */
  readonly default: (command: Command) => T | undefined;
  /** The default as the help says it, when the value alone does not (one per core, say). */
  readonly defaultHelp?: string;
  /** The value as `ledger-query config` prints it (and the file takes it). */
  readonly show: (value: T) => string;
  /** A variable read too, below LEDGER_QUERY_NAME, that earlier versions read (DATABASE_URL, PORT). */
  readonly legacyEnv?: string;
  /** Holds a password: printed masked. */
  readonly secret?: boolean;
  /** Always has a value (a default for every command that takes it). */
  readonly always: boolean;
}

/** A setting that always has a value. */
export type DefaultedSetting<T> = Setting<T> & { readonly always: true };

/** The value a setting holds in a configuration: with a default, never undefined. */
export type ValueOf<S> = S extends DefaultedSetting<infer T> ? T : S extends Setting<infer T> ? T | undefined : never;

type Spec<T> = Omit<Setting<T>, 'default' | 'always' | 'show' | 'flag' | 'fileKind'> & {
  show?: (value: T) => string;
  flag?: 'string' | 'boolean';
  fileKind?: FileKind;
};

/** A setting without a default: off, or its default said in the help. */
export function optional<T>(spec: Spec<T>): Setting<T> {
  return { flag: 'string', fileKind: 'text', show: String, ...spec, default: () => undefined, always: false };
}

/** A setting with a default, the same for every command, or per command. */
export function defaulted<T>(spec: Spec<T>, fallback: T | ((command: Command) => T)): DefaultedSetting<T> {
  const of = typeof fallback === 'function' ? (fallback as (command: Command) => T) : () => fallback;
  return { flag: 'string', fileKind: 'text', show: String, ...spec, default: of, always: true };
}

/** A switch: off unless given (a flag without value; true/false in a file; 1/0, true/false, yes/no in the environment). */
export function toggle(spec: Omit<Spec<boolean>, 'parse' | 'placeholder'>): DefaultedSetting<boolean> {
  return defaulted({ ...spec, placeholder: '', flag: 'boolean', fileKind: 'boolean', parse: parseToggle }, false);
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);

function parseToggle(text: string): boolean {
  const lower = text.toLowerCase();
  if (TRUE.has(lower)) return true;
  if (FALSE.has(lower)) return false;
  throw new UsageError(`must be true or false (1/0, yes/no), got "${text}"`);
}

// ---------------------------------------------------------------- readers of values

/** Reads a decimal number (no sign, no exponent) that `ok` accepts; else says it must be `what`. */
export function decimal(what: string, ok: (n: number) => boolean): (text: string) => number {
  return (text) => {
    const n = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
    if (!ok(n)) throw new UsageError(`must be ${what}, got "${text}"`);
    return n;
  };
}

export const positiveInteger = decimal('a positive integer', (n) => Number.isSafeInteger(n) && n > 0);
export const wholeNumber = decimal('a whole number', (n) => Number.isSafeInteger(n) && n >= 0);
export const positiveSeconds = decimal('a number of seconds above 0', (n) => n > 0);
export const secondsOrZero = decimal('a number of seconds (0: never)', (n) => n >= 0);

/** One of `choices`, as given. */
export function oneOf<C extends string>(choices: readonly C[]): (text: string) => C {
  return (text) => {
    if ((choices as readonly string[]).includes(text)) return text as C;
    throw new UsageError(`must be one of ${choices.join(', ')}, got "${text}"`);
  };
}

/** A comma-separated list; `none` is the empty list. */
export function listOf(text: string): string[] {
  return text === 'none' ? [] : text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

export const showList = (list: readonly string[]) => (list.length === 0 ? 'none' : list.join(','));

/** A URL with its password replaced by ***, for messages and `ledger-query config`. */
export function maskPassword(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_all, credentials: string) => {
    const colon = credentials.indexOf(':');
    return `//${colon < 0 ? credentials : `${credentials.slice(0, colon)}:***`}@`;
  });
}

/** The environment variable of a setting: LEDGER_QUERY_ and its name in upper snake case. */
export const ENV_PREFIX = 'LEDGER_QUERY_';
export const envName = (name: string) => ENV_PREFIX + name.toUpperCase().replaceAll('-', '_');
