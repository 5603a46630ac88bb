/** The README's table of settings lists every setting of src/config, with its variable and file key, and no other. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { envName } from '../../src/config/setting.js';
import { SETTING_NAMES, settingOf } from '../../src/config/settings.js';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

test('every setting has its row in the README: flag, variable (and the older one), file key', () => {
  const rows = new Map<string, string[]>();
  for (const m of README.matchAll(/^\| `--([a-z-]+)[^`]*` \|([^|]*)\|([^|]*)\|/gm)) rows.set(m[1]!, [m[2]!.trim(), m[3]!.trim()]);
  for (const name of SETTING_NAMES) {
    const row = rows.get(name);
    assert.ok(row, `--${name} has a row`);
    const [env, key] = row as [string, string];
    assert.ok(env.startsWith(`\`${envName(name)}\``), `--${name}: ${env}`);
    const legacy = settingOf(name).legacyEnv;
    if (legacy !== undefined) assert.ok(env.includes(`\`${legacy}`), `--${name}: also ${legacy}`);
    assert.equal(key, `\`${name}\``);
  }
  assert.deepEqual([...rows.keys()].filter((n) => n !== 'config' && !SETTING_NAMES.includes(n as never)), [], 'no row of a setting that is not');
});
