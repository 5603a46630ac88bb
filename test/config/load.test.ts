/**
 * One configuration (src/config): every setting is a flag, a variable and a
 * file key; a flag wins over a variable, a variable over the file, the file
 * over the default; a key, a variable or a value that is not one is refused
 * on one line naming it and where it came from; the flags of earlier
 * versions keep their names and defaults.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { DEFAULT_HTTP_OPTIONS } from '../../src/api/http-options.js';
import { optionsHelp } from '../../src/config/help.js';
import { httpOptionsOf } from '../../src/config/http-settings.js';
import { loadConfiguration, type LoadOptions } from '../../src/config/load.js';
import { printConfiguration } from '../../src/config/print.js';
import { COMMANDS, envName, type Command } from '../../src/config/setting.js';
import { SETTING_NAMES, settingOf, settingsOf } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { resolveLogFormat } from '../../src/log-options.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function file(extension: string, text: string): string {
  const path = join(dir, `config-${++files}.${extension}`);
  writeFileSync(path, text);
  return path;
}

const load = (command: Command, args: string[], env: NodeJS.ProcessEnv = {}, options: LoadOptions = {}) =>
  loadConfiguration(command, args, { ...options, env });

/** The one line a refused configuration says. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof UsageError, `a usage error (exit 2), not ${String(e)}`);
    assert.equal(e.exitStatus, 2);
    assert.doesNotMatch(e.message, /\n/, 'one line');
    return e.message;
  }
  assert.fail('accepted');
}

test('a flag wins over a variable, a variable over the file, the file over the default; each value says where it came from', () => {
  const toml = file('toml', 'port = 4001\nhost = "10.0.0.1"\nworkers = 3\nlog-level = "warn"\n');
  const env = { LEDGER_QUERY_PORT: '4002', LEDGER_QUERY_HOST: '10.0.0.2' };
  const c = load('serve', ['--config', toml, '--port', '4003'], env);
  assert.equal(c.values.port, 4003);
  assert.deepEqual(c.origins.port, { from: 'flag' });
  assert.equal(c.values.host, '10.0.0.2');
  assert.deepEqual(c.origins.host, { from: 'env', variable: 'LEDGER_QUERY_HOST' });
  assert.equal(c.values.workers, 3);
  assert.deepEqual(c.origins.workers, { from: 'file', path: toml });
  assert.equal(c.values['log-level'], 'warn');
  assert.equal(c.values['answer-cache-mb'], 24);
  assert.deepEqual(c.origins['answer-cache-mb'], { from: 'default' });
  assert.equal(c.values['rate-limit'], undefined);
  assert.equal(c.origins['rate-limit'], undefined, 'not set, and no default');

  const json = file('json', JSON.stringify({ port: 4001, 'no-ingest': true, 'trusted-proxies': ['10.1.1.1', '10.1.1.2'] }));
  const viaEnv = load('serve', [], { LEDGER_QUERY_CONFIG: json, LEDGER_QUERY_NO_INGEST: '0' });
  assert.equal(viaEnv.values.port, 4001, 'LEDGER_QUERY_CONFIG names the file when --config does not');
  assert.equal(viaEnv.values['no-ingest'], false, 'a variable turns off what the file turns on');
  assert.deepEqual(viaEnv.values['trusted-proxies'], ['10.1.1.1', '10.1.1.2']);
  assert.equal(viaEnv.file, json);
});

test('the variables earlier versions read still work, below LEDGER_QUERY_ ones', () => {
  const legacy = { DATABASE_URL: 'postgres://a@h/old', PORT: '4100', LEDGER_DATA_DIR: '/srv/x', LOG_LEVEL: 'debug', LOG_REQUESTS: '1' };
  const c = load('serve', [], legacy);
  assert.equal(c.values['database-url'], 'postgres://a@h/old');
  assert.equal(c.values.port, 4100);
  assert.equal(c.values['log-level'], 'debug');
  assert.equal(c.values['log-requests'], true);
  assert.deepEqual(c.origins.port, { from: 'env', variable: 'PORT' });
  const newer = load('serve', [], { ...legacy, LEDGER_QUERY_PORT: '4200', LEDGER_QUERY_DATABASE_URL: 'postgres://a@h/new' });
  assert.equal(newer.values.port, 4200);
  assert.equal(newer.values['database-url'], 'postgres://a@h/new');
  assert.equal(load('serve', [], { DATABASE_URL: '' }).values['database-url'], undefined, 'an empty variable is unset, as before');
  assert.equal(load('ingest', [], { PORT: 'not ours' }).values.port, 3008, 'a generic variable is read only by the commands that take it');
});

test('of --data-dir and --database-url, the higher source wins; both at once from flags or one file contradict each other', () => {
  const url = 'postgres://u:pw@h/db';
  const flagOverEnv = load('ingest', ['--data-dir', '/d'], { DATABASE_URL: url });
  assert.equal(flagOverEnv.values['database-url'], undefined, 'an explicit --data-dir wins over DATABASE_URL, as before');
  assert.equal(flagOverEnv.values['data-dir'], '/d');
  assert.deepEqual(flagOverEnv.origins['database-url'], { from: 'overridden', by: '--data-dir' });
  assert.equal(load('ingest', ['--database-url', url], { LEDGER_QUERY_DATA_DIR: '/d' }).values['database-url'], url);
  assert.equal(load('ingest', [], { LEDGER_DATA_DIR: '/d', DATABASE_URL: url }).values['database-url'], url,
    'both variables: the database, as before');
  assert.match(refusal(() => load('ingest', ['--data-dir', '/d', '--database-url', url])), /give data-dir or database-url, not both/);
  const both = file('toml', `data-dir = "/d"\ndatabase-url = "${url}"\n`);
  assert.match(refusal(() => load('serve', ['--config', both])), new RegExp(`data-dir in ${both}, database-url in ${both}`));
});

test('an unknown key, variable or flag is refused on one line naming it, with the nearest setting', () => {
  const typo = file('toml', 'prot = 3008\n');
  assert.equal(refusal(() => load('serve', ['--config', typo])), `${typo}: unknown key "prot": did you mean port?`);
  const nested = file('toml', '[http]\nport = 1\n');
  assert.equal(refusal(() => load('serve', ['--config', nested])), `${nested}: unknown key "http"`);
  assert.equal(refusal(() => load('serve', [], { LEDGER_QUERY_DATABSE_URL: 'x' })),
    'LEDGER_QUERY_DATABSE_URL: no setting has this name: did you mean LEDGER_QUERY_DATABASE_URL?');
  assert.equal(refusal(() => load('serve', ['--max-conections', '5'])),
    'unknown option --max-conections: did you mean --max-connections? (ledger-query serve --help lists them)');
  assert.match(refusal(() => load('ingest', ['--port', '1'])), /^unknown option --port /, 'a flag of another command');
});

test('a bad value is refused on one line naming the setting and where it came from', () => {
  assert.equal(refusal(() => load('serve', ['--port', '70000'])), '--port: must be from 0 to 65535, got "70000"');
  assert.equal(refusal(() => load('serve', [], { LEDGER_QUERY_HEAD_TIMEOUT: '0' })),
    'LEDGER_QUERY_HEAD_TIMEOUT: must be a number of seconds above 0, got "0"');
  assert.equal(refusal(() => load('serve', [], { LOG_LEVEL: 'loud' })),
    'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
  const bad = file('toml', 'max-connections = 1.5\n');
  assert.equal(refusal(() => load('serve', ['--config', bad])), `max-connections in ${bad}: must be a positive integer, got "1.5"`);
  const wrongKind = file('json', '{"follow": "yes please"}');
  assert.equal(refusal(() => load('serve', ['--config', wrongKind])), `follow in ${wrongKind}: must be true or false, got "yes please"`);
  const secret = file('toml', 'database-url = "mysql://root:hunter2@db/x"\n');
  const said = refusal(() => load('serve', ['--config', secret]));
  assert.equal(said, `database-url in ${secret}: must be a postgres:// URL, got "mysql://root:***@db/x"`);
  // A value of a setting this command does not take is checked too: the file is one configuration.
  const other = file('toml', 'blocks = 0\n');
  assert.match(refusal(() => load('serve', ['--config', other])), /^blocks in .*: must be a positive integer/);
  const broken = file('toml', 'port = \n');
  assert.match(refusal(() => load('serve', ['--config', broken])), new RegExp(`^${broken}: not valid TOML: .*\\(line 1, column \\d+\\)$`));
  assert.match(refusal(() => load('serve', ['--config', file('yaml', 'port: 1')])), /is neither \.json nor \.toml$/);
  assert.match(refusal(() => load('serve', ['--config', join(dir, 'missing.toml')])), /^--config: no such file: .*missing\.toml$/);
  assert.match(refusal(() => load('serve', [], { LEDGER_QUERY_CONFIG: dir })), /^LEDGER_QUERY_CONFIG: not a file: /);
});

test('the flags of earlier versions keep their names and defaults', () => {
  const earlier: Record<Command, string[]> = {
    serve: ['port', 'host', 'data-dir', 'database-url', 'source', 'follow', 'allow-gaps', 'no-ingest', 'accept-unverified', 'workers',
      'answer-cache-mb', 'head-timeout', 'idle-timeout', 'max-connections', 'max-header-kb', 'max-list-values', 'query-timeout',
      'rate-limit', 'rate-limit-burst', 'trusted-proxies', 'cors-origins', 'cors-max-age', 'ready-max-lag'],
    ingest: ['data-dir', 'database-url', 'allow-gaps', 'accept-unverified'],
    copy: ['from', 'to'],
    simulate: ['out', 'blocks', 'seed', 'orders-per-block'],
    demo: ['port', 'host', 'data-dir', 'database-url', 'blocks', 'seed', 'workers'],
  };
  for (const command of COMMANDS) {
    for (const name of earlier[command]) assert.ok(settingsOf(command).includes(name as never), `${command} --${name}`);
  }
  const serve = load('serve', []).values;
  assert.equal(serve.port, 3008);
  assert.equal(serve.host, '127.0.0.1');
  assert.equal(serve['data-dir'], './data');
  assert.deepEqual(httpOptionsOf(serve), DEFAULT_HTTP_OPTIONS, 'the HTTP server\'s own defaults');
  assert.equal(load('demo', []).values['data-dir'], 'data/demo');
  assert.equal(load('demo', []).values.blocks, 500);
  assert.equal(load('simulate', []).values.blocks, 1000);
  assert.equal(load('simulate', []).values.seed, 1);
  assert.equal(load('simulate', []).values['orders-per-block'], 50);
  const given = load('serve', ['--rate-limit', '10', '--cors-origins', 'none', '--max-header-kb', '64', '--query-timeout', '0']).values;
  const http = httpOptionsOf(given);
  assert.deepEqual(http.rateLimit, { perSecond: 10, burst: 50 });
  assert.deepEqual(http.corsOrigins, []);
  assert.equal(http.maxHeadBytes, 64 * 1024);
  assert.equal(http.queryTimeoutMs, 0);
  assert.match(refusal(() => httpOptionsOf(load('serve', ['--rate-limit-burst', '5']).values)), /--rate-limit-burst goes with --rate-limit/);
});

test('--help lists every option of the command with its variable; `config` prints every value, passwords masked, as TOML that reads back', () => {
  for (const command of COMMANDS) {
    const help = optionsHelp(command);
    for (const name of settingsOf(command)) {
      assert.match(help, new RegExp(`^  --${name}\\b`, 'm'), `${command} --help lists --${name}`);
      assert.ok(help.replace(/\s+/g, ' ').includes(envName(name)), `${command} --help names ${envName(name)}`);
    }
  }
  const toml = file('toml', 'cors-origins = ["https://a.example", "https://b.example"]\nfollow = true\n');
  const c = load('serve', ['--config', toml, '--database-url', 'postgres://writer:s3cret-pw@db:5432/ledger', '--port', '0'],
    { LEDGER_QUERY_RATE_LIMIT: '2.5' });
  const printed = printConfiguration(c);
  assert.ok(!printed.includes('s3cret-pw'), 'the password is masked');
  assert.match(printed, /^database-url = "postgres:\/\/writer:\*\*\*@db:5432\/ledger" +# --database-url$/m);
  assert.match(printed, /^port = 0 +# --port$/m);
  assert.match(printed, /^rate-limit = 2\.5 +# LEDGER_QUERY_RATE_LIMIT$/m);
  assert.match(printed, new RegExp(`^follow = true +# follow in ${toml}$`, 'm'));
  assert.match(printed, /^answer-cache-mb = 24 +# default$/m);
  assert.match(printed, /^# source = +# not set$/m);
  // What it prints is a config file: read back, it gives the same values (the password aside).
  const table = parseToml(printed);
  const back = load('serve', ['--config', file('toml', printed)]);
  for (const name of settingsOf('serve')) {
    if (settingOf(name).secret) continue;
    assert.deepEqual(back.values[name], c.values[name], name);
  }
  // Every setting with a value, but the folder, which a database URL leaves unused.
  assert.equal(Object.keys(table).length, settingsOf('serve').filter((n) => c.values[n] !== undefined && n !== 'data-dir').length);
  assert.match(printed, /^# data-dir = "\.\/data" +# default; not used: the store is the database$/m);
  for (const name of SETTING_NAMES) assert.ok(settingOf(name).commands.length > 0, `${name} belongs to a command`);
});

test('logs: auto is pretty on a terminal and JSON otherwise; pretty and json force either', () => {
  assert.equal(resolveLogFormat('auto', true), 'pretty');
  assert.equal(resolveLogFormat('auto', false), 'json');
  assert.equal(resolveLogFormat('json', true), 'json');
  assert.equal(resolveLogFormat('pretty', false), 'pretty');
  assert.equal(load('serve', [], { LEDGER_QUERY_LOG_FORMAT: 'pretty' }).values['log-format'], 'pretty');
});
