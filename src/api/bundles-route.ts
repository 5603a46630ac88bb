/** GET /api/v2/erc20/multisigcontrol/signer/{added,removed}/bundles: signer bundles, filtered and paged. */
import type { BundleFilter, BundleKey } from '../domain/bundle.js';
import { bundleAnswerKey } from './answer-key.js';
import { bundleCursors, removedBundleCursors } from './cursor.js';
import { InvalidEpochError, InvalidFilterError } from './errors.js';
import { REMOVED_BUNDLES_PAGE_DOC } from './openapi/companions.js';
import { pageRoute } from './page-route.js';
import { BUNDLE_FILTER_PARAMS } from './parameters.js';
import { readBundleFilter } from './read-parameters.js';

export const BUNDLES_PATH = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

export const bundlesRoute = pageRoute<BundleFilter, BundleKey>({
  path: BUNDLES_PATH, field: 'bundles', cursors: bundleCursors, readFilter: readBundleFilter, answerKey: bundleAnswerKey,
  list: (store, filter, page) => store.listBundles(filter, page),
  doc: {
    operationId: 'listERC20MultiSigSignerAddedBundles', tag: 'bundles', summary: 'Signer-added bundles, filtered and paged',
    description:
      'Bundles of signatures that add a signer to the ERC20 multisig contract, by the time they were added ' +
      '(`timestamp` descending, then signature id descending) by default, or exactly the reverse. Paged as the orders are.',
    filters: BUNDLE_FILTER_PARAMS, answerSchema: 'ListERC20MultiSigSignerAddedBundlesResponse',
    refusals: [InvalidFilterError, InvalidEpochError],
  },
});

export const REMOVED_BUNDLES_PATH = '/api/v2/erc20/multisigcontrol/signer/removed/bundles';

export const removedBundlesRoute = pageRoute<BundleFilter, BundleKey>({
  path: REMOVED_BUNDLES_PATH, field: 'bundles', cursors: removedBundleCursors, readFilter: readBundleFilter,
  answerKey: (filter, page, cursors, pretty) => `removed${bundleAnswerKey(filter, page, cursors, pretty)}`,
  list: (store, filter, page) => store.listRemovedBundles(filter, page),
  doc: REMOVED_BUNDLES_PAGE_DOC,
});
