/**
 * The docs page in a real browser (Debian's Chromium, headless, driven by
 * playwright-core): /docs of the real `serve` lists every endpoint of the
 * document, and a "try it" of GET /api/v2/orders shows the store's orders.
 * Without Chromium it fails, saying how to install it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chromiumPath, launchChromium, NO_CHROMIUM } from '../support/browser.js';
import { openDocs, startDocsServer, tryOrders } from '../support/docs-page.js';

test('the docs page lists the endpoints, and "try it" of /api/v2/orders shows orders', async (t) => {
  assert.ok(chromiumPath() !== undefined, NO_CHROMIUM);
  const docs = await startDocsServer();
  t.diagnostic(`the docs page served on ${docs.what}`);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (e) => failures.push(e.message));
    await openDocs(page, docs.server.url);

    const document = await (await fetch(`${docs.server.url}/api/v2/openapi.json`)).json() as { paths: Record<string, unknown> };
    const listed = await page.locator('.opblock-summary-path').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
    assert.deepEqual([...listed].sort(), Object.keys(document.paths).sort());

    const orders = await (await fetch(`${docs.server.url}/api/v2/orders?pagination.first=5000`)).json() as { orders: { edges: { node: { id: string } }[] } };
    const ids = orders.orders.edges.map((e) => e.node.id);
    assert.ok(ids.length > 0, 'the store has orders');
    const shown = await tryOrders(page);
    assert.equal(shown.status, '200');
    assert.match(shown.body, /"orders"/);
    // The page shows the server's own orders: the first of them, newest first.
    assert.ok(shown.body.includes(ids[0]!), `${ids[0]} in ${shown.body.slice(0, 300)}`);
    assert.deepEqual(failures, []);
  } finally {
    await browser.close();
    await docs.stop();
  }
});
