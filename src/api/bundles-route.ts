/** GET /api/v2/erc20/multisigcontrol/signer/added/bundles: signer-added bundles, filtered and paged. */
import type { FastifyInstance } from 'fastify';
import { bundleAnswerKey } from './answer-key.js';
import { sendAnswer, type PageRouteOptions } from './answers.js';
import { bundleCursors } from './cursor.js';
import { connectionJson } from './envelope.js';
import { readBundleFilter, readPagination, wantsPretty } from './params.js';
import { readQuery } from './query.js';

export const BUNDLES_PATH = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

export async function bundlesRoute(app: FastifyInstance, options: PageRouteOptions): Promise<void> {
  app.get(BUNDLES_PATH, async (request, reply) => {
    const query = readQuery(request.url);
    const page = readPagination(query, bundleCursors);
    const filter = readBundleFilter(query);
    const pretty = wantsPretty(query);
    return sendAnswer({
      ...options, request, reply, pretty,
      key: bundleAnswerKey(filter, page, bundleCursors, pretty),
      read: async () => {
        const result = await options.store.listBundles(filter, page);
        return { json: connectionJson('bundles', result, bundleCursors), lastBlock: result.lastBlock };
      },
    });
  });
}
