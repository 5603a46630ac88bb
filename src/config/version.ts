/** The version of ledger-query: package.json's, read where the package is installed (dist/src/config/ -> the package's root). */
import { readFileSync } from 'node:fs';

export function version(): string {
  const json = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return json.version;
}
