/**
 * Debian's Chromium, driven headless by playwright-core, for the docs page's
 * test and screenshot. Not a browser build of Playwright's own: the machine's
 * package (`apt-get install chromium`; .ci/run installs it when missing).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

/** The Chromium executable: CHROMIUM_PATH, or where Debian puts it; undefined when there is none. */
export function chromiumPath(): string | undefined {
  const given = process.env.CHROMIUM_PATH;
  if (given !== undefined && given !== '') return existsSync(given) ? given : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

/** One line saying how to get it. */
export const NO_CHROMIUM =
  'no Chromium at /usr/bin/chromium (or CHROMIUM_PATH): install Debian\'s, `apt-get install chromium` (.ci/run does when it is missing)';

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (executablePath === undefined) throw new Error(NO_CHROMIUM);
  // As root (CI, containers) Chromium runs only without its sandbox.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}
