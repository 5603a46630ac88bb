/** GET /api/v2/erc20/multisigcontrol/signer/added/bundles: signer-added bundles, filtered and paged. */
import { bundleAnswerKey } from './answer-key.js';
import { bundleCursors } from './cursor.js';
import { pageRoute } from './page-route.js';
import { readBundleFilter } from './params.js';

export const BUNDLES_PATH = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

export const bundlesRoute = pageRoute({
  path: BUNDLES_PATH, field: 'bundles', cursors: bundleCursors, readFilter: readBundleFilter, answerKey: bundleAnswerKey,
  list: (store, filter, page) => store.listBundles(filter, page),
});
