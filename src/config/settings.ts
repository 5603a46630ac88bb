/**
 * Every setting of ledger-query's commands, in one table: each is a flag
 * (`--port`), a variable (`LEDGER_QUERY_PORT`) and a key of a config file
 * (`port`), read by ./load.ts with one precedence (flag, then variable,
 * then file, then the default). The help of each command and
 * `ledger-query config` are written from it (./help.ts, ./print.ts).
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_ANSWER_CACHE_BYTES } from '../api/http-options.js';
import { ARCHIVE, parseRetention, RETENTION_HELP, retentionText, type Retention } from '../domain/retention.js';
import { UsageError } from '../errors.js';
import { SOURCE_SPEC_HELP, parseSourceSpec } from '../ingest/source-spec.js';
import { DEFAULT_DATA_DIR } from '../store/location.js';
import { HTTP_SETTINGS } from './http-settings.js';
import {
  defaulted, maskPassword, oneOf, optional, positiveInteger, toggle, wholeNumber, type Command, type Setting, type ValueOf,
} from './setting.js';

function nonEmpty(text: string): string {
  if (text === '') throw new UsageError('must not be empty');
  return text;
}

function databaseUrl(text: string): string {
  if (!/^postgres(ql)?:\/\//.test(text)) throw new UsageError(`must be a postgres:// URL, got "${maskPassword(text)}"`);
  return text;
}

function port(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new UsageError(`must be from 0 to 65535, got "${text}"`);
  return Number(text);
}

function sourceSpec(text: string): string {
  parseSourceSpec(text);
  return text;
}

function retention(text: string): Retention {
  const r = parseRetention(text);
  if (r === undefined) throw new UsageError(`must be ${RETENTION_HELP} (above 0), got "${text}"`);
  return r;
}

const STORE = {
  'data-dir': defaulted({
    placeholder: 'DIR', commands: ['serve', 'ingest', 'demo'], parse: nonEmpty, legacyEnv: 'LEDGER_DATA_DIR',
    help: 'the embedded store\'s folder',
  }, (command: Command) => (command === 'demo' ? join(DEFAULT_DATA_DIR, 'demo') : DEFAULT_DATA_DIR)),
  'database-url': optional({
    placeholder: 'URL', commands: ['serve', 'ingest', 'demo'], parse: databaseUrl, legacyEnv: 'DATABASE_URL', secret: true,
    help: 'a PostgreSQL database instead, postgres://user:password@host:port/db (of --data-dir and --database-url, the one given by the higher source wins)',
  }),
  retention: defaulted({
    placeholder: 'R', commands: ['serve', 'ingest', 'demo'], parse: retention, show: retentionText,
    help: `history the writer keeps: ${RETENTION_HELP} (network time, by block timestamps); ` +
      'older orders that can no longer trade and older versions are pruned (README "Retention")',
  }, ARCHIVE),
};

/** A copy's store: a postgres:// URL, checked as --database-url, or else an embedded store's folder. */
function copyStore(text: string): string {
  nonEmpty(text);
  return /^postgres/i.test(text) ? databaseUrl(text) : text;
}

const COPY = {
  from: optional({
    placeholder: 'STORE', commands: ['copy'], parse: copyStore, secret: true,
    help: 'the store to copy: an embedded store\'s folder, or a postgres:// URL',
  }),
  to: optional({
    placeholder: 'STORE', commands: ['copy'], parse: copyStore, secret: true,
    help: 'the new store: a folder without a store in it, or a postgres:// URL of a database without our tables',
  }),
  'max-rate': optional({
    placeholder: 'ROWS', commands: ['copy'], fileKind: 'number', parse: positiveInteger,
    help: 'at most this many rows a second, read and checked, so that the source\'s server keeps its cores (README "Copying a store")',
  }),
};

/** pino's levels. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const SERVE = {
  port: defaulted({
    placeholder: 'N', commands: ['serve', 'demo'], fileKind: 'number', parse: port, legacyEnv: 'PORT',
    help: 'port to listen on (0: any free port)',
  }, 3008),
  host: defaulted({
    placeholder: 'H', commands: ['serve', 'demo'], parse: nonEmpty,
    help: 'address to bind (0.0.0.0 for all interfaces)',
  }, '127.0.0.1'),
  workers: defaulted({
    placeholder: 'N', commands: ['serve', 'demo'], fileKind: 'number', parse: positiveInteger,
    defaultHelp: `one per core, ${availableParallelism()} here`,
    help: 'HTTP processes answering on the port; ingestion stays in the first process',
  }, availableParallelism()),
  source: optional({
    placeholder: 'SPEC', commands: ['serve'], parse: sourceSpec,
    help: `ingest from it while serving: ${SOURCE_SPEC_HELP}`,
  }),
  follow: toggle({ commands: ['serve'], help: 'keep reading a file:// source as the core appends to it' }),
  'allow-gaps': toggle({ commands: ['serve', 'ingest'], help: 'accept a jump in block height instead of stopping' }),
  'accept-unverified': toggle({
    commands: ['serve', 'ingest'],
    help: 'of a gzip file cut short, store the whole blocks of its last member too, though its CRC-32 and length are missing',
  }),
  'no-ingest': toggle({
    commands: ['serve'],
    help: 'queries only: never migrate or write (a PostgreSQL role with SELECT rights, or a read replica, will do)',
  }),
  'answer-cache-mb': defaulted({
    placeholder: 'N', commands: ['serve'], fileKind: 'number', parse: wholeNumber,
    help: 'MB of answers each HTTP process keeps until the next block (0: none)',
  }, DEFAULT_ANSWER_CACHE_BYTES / 2 ** 20),
};

const LOG = {
  'log-level': defaulted({
    placeholder: 'LEVEL', commands: ['serve', 'demo'], parse: oneOf(LOG_LEVELS), legacyEnv: 'LOG_LEVEL',
    help: `what the server logs: ${LOG_LEVELS.join(', ')}`,
  }, 'info'),
  'log-requests': toggle({
    commands: ['serve', 'demo'], legacyEnv: 'LOG_REQUESTS',
    help: 'log every request (failures are logged either way)',
  }),
  'log-format': defaulted({
    placeholder: 'F', commands: ['serve', 'demo'], parse: oneOf(LOG_FORMATS),
    help: 'pretty (readable lines), json (one object a line), or auto: pretty on a terminal, else json',
  }, 'auto' as LogFormat),
};

const SIMULATE = {
  out: optional({ placeholder: 'FILE', commands: ['simulate'], parse: nonEmpty, help: 'the event file to write' }),
  blocks: defaulted({
    placeholder: 'N', commands: ['simulate', 'demo'], fileKind: 'number', parse: positiveInteger, help: 'blocks to simulate',
  }, (command: Command) => (command === 'demo' ? 500 : 1000)),
  seed: defaulted({
    placeholder: 'S', commands: ['simulate', 'demo'], fileKind: 'number', parse: positiveInteger, help: 'random seed',
  }, 1),
  'orders-per-block': defaulted({
    placeholder: 'N', commands: ['simulate'], fileKind: 'number', parse: positiveInteger, help: 'average new orders per block',
  }, 50),
};

/** Every setting, in the order the help lists them. */
export const SETTINGS = { ...STORE, ...SERVE, ...HTTP_SETTINGS, ...LOG, ...SIMULATE, ...COPY };

export type SettingName = keyof typeof SETTINGS;

/** A configuration's values: a setting a command does not take has its default (or none). */
export type Values = { [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

export function settingOf(name: SettingName): Setting<unknown> {
  return SETTINGS[name] as Setting<unknown>;
}

/** The settings `command` takes, in table order. */
export function settingsOf(command: Command): SettingName[] {
  return SETTING_NAMES.filter((name) => settingOf(name).commands.includes(command));
}
