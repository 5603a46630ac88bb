/**
 * `ledger-query config`: a command's effective configuration, each value
 * with where it came from, passwords masked. It is written as TOML, so that
 * it can start a config file (once the masked password is put back).
 */
import type { Configuration } from './load.js';
import { originLabel } from './load.js';
import { settingOf, settingsOf } from './settings.js';
import { maskPassword } from './setting.js';

/** A TOML string: JSON's escapes are TOML's for the characters a setting holds. */
const quoted = (text: string) => JSON.stringify(text);

export function printConfiguration(config: Configuration): string {
  const rows: Array<[string, string]> = [];
  for (const name of settingsOf(config.command)) {
    const setting = settingOf(name);
    const value = config.values[name];
    const origin = config.origins[name];
    if (value === undefined) {
      rows.push([`# ${name} =`, origin === undefined ? 'not set' : originLabel(name, origin)]);
      continue;
    }
    let text = setting.show(value);
    if (setting.secret) text = maskPassword(text);
    const literal = setting.fileKind === 'number' || setting.fileKind === 'boolean' ? text : quoted(text);
    const said = origin === undefined ? '' : originLabel(name, origin);
    // The folder has a value (its default) even when the store is a database, which a file must not name beside it.
    if (name === 'data-dir' && config.values['database-url'] !== undefined) {
      rows.push([`# ${name} = ${literal}`, `${said}; not used: the store is the database`]);
    } else {
      rows.push([`${name} = ${literal}`, said]);
    }
  }
  const width = Math.max(...rows.map(([left]) => left.length));
  const from = config.file === undefined ? 'no config file' : `config file ${config.file}`;
  return [
    `# ledger-query ${config.command}: the effective configuration (${from}); each value's source on its right,`,
    '# a flag winning over a variable, a variable over the file, the file over the default',
    ...rows.map(([left, right]) => `${left.padEnd(width)}  # ${right}`),
    '',
  ].join('\n');
}
