/**
 * The docs page as a person uses it: the real `serve` on a store of the real
 * recording (or of the simulator's network where ../shared is absent), /docs
 * opened in Chromium, and a "try it" of GET /api/v2/orders.
 */
import { existsSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { startServe, type RunningServer } from './cli.js';
import { REAL_RECORDING } from './real-recording.js';
import { recordingStore, simulatedStore, type ServedStore } from './served-stores.js';

export interface DocsServer {
  server: RunningServer;
  store: ServedStore;
  /** What the store is, on one line. */
  what: string;
  stop(): Promise<void>;
}

export async function startDocsServer(): Promise<DocsServer> {
  const real = existsSync(REAL_RECORDING);
  const store = real ? recordingStore(REAL_RECORDING) : simulatedStore(40, 5);
  const what = real
    ? 'the real recording (../shared/fixtures/system_tests.evt.gz)'
    : `the simulator's network: the real recording is not at ${REAL_RECORDING}`;
  const server = await startServe(['--data-dir', store.dataDir, '--workers', '1']);
  return {
    server, store, what,
    stop: async () => {
      await server.stop();
      store.remove();
    },
  };
}

/** Opens /docs and waits until Swagger UI lists the operations. */
export async function openDocs(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
}

/** "Try it out" and "Execute" on GET /api/v2/orders; resolves with the response body shown on the page. */
export async function tryOrders(page: Page): Promise<{ status: string; body: string }> {
  const block = page.locator('#operations-orders-listOrders');
  await block.locator('.opblock-summary').click();
  await block.locator('.try-out__btn').click();
  await block.locator('button.execute').click();
  const answer = block.locator('.live-responses-table tr.response');
  await answer.locator('.response-col_status').waitFor({ timeout: 60_000 });
  const status = (await answer.locator('.response-col_status').innerText()).trim();
  const body = await answer.locator('.response-col_description pre').first().innerText();
  return { status, body };
}
