/** The options part of each command's --help, written from the table of settings (./settings.ts). */
import { CONFIG_ENV } from './load.js';
import { settingOf, settingsOf, type SettingName } from './settings.js';
import { envName, type Command, type Setting } from './setting.js';

const WIDTH = 80;
const INDENT = '      ';

/** `text` in lines of at most WIDTH columns, each after `indent`. */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(indent + line);
  return lines.join('\n');
}

function defaultOf(setting: Setting<unknown>, command: Command): string | undefined {
  if (setting.defaultHelp !== undefined) return setting.defaultHelp;
  if (setting.flag === 'boolean') return undefined;
  const value = setting.default(command);
  return value === undefined ? undefined : setting.show(value);
}

function optionHelp(name: SettingName, command: Command): string {
  const setting = settingOf(name);
  const head = `  --${name}${setting.placeholder === '' ? '' : ` ${setting.placeholder}`}`;
  const env = [envName(name), ...(setting.legacyEnv === undefined ? [] : [setting.legacyEnv])].join(' or ');
  const fallback = defaultOf(setting, command);
  const text = `${setting.help}.${fallback === undefined ? '' : ` Default ${fallback}.`} Env ${env}.`;
  return `${head}\n${wrap(text, INDENT)}`;
}

/** Every option of `command`, each with its variable and default, and how a config file gives them. */
export function optionsHelp(command: Command): string {
  const options = settingsOf(command).map((name) => optionHelp(name, command)).join('\n');
  return `Options, each also a variable (LEDGER_QUERY_ and its name in capitals) and a
key of a config file; a flag wins over a variable, a variable over the file,
the file over the default:
  --config FILE
${wrap(`settings from a JSON or TOML file (by its extension): keys are the option names (port = 3008). Env ${CONFIG_ENV}.`, INDENT)}
${options}
  -h, --help
${INDENT}this help
`;
}
