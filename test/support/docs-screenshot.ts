/**
 * `npm run screenshot`: the docs page as the browser test sees it
 * (./docs-page.ts), /docs of the real `serve` in Debian's Chromium:
 * docs/docs-page.png, its endpoints listed, and docs/docs-try-it.png, a
 * "try it" of GET /api/v2/orders answered.
 */
import { fileURLToPath } from 'node:url';
import { launchChromium } from './browser.js';
import { openDocs, startDocsServer, tryOrders } from './docs-page.js';

const PAGE = fileURLToPath(new URL('../../../docs/docs-page.png', import.meta.url));
const TRY_IT = fileURLToPath(new URL('../../../docs/docs-try-it.png', import.meta.url));

const docs = await startDocsServer();
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await openDocs(page, docs.server.url);
  await page.screenshot({ path: PAGE });
  await tryOrders(page);
  await page.locator('#operations-orders-listOrders .responses-inner > div').first().screenshot({ path: TRY_IT });
  process.stdout.write(`wrote ${PAGE} and ${TRY_IT}: the docs page served on ${docs.what}\n`);
} finally {
  await browser.close();
  await docs.stop();
}
