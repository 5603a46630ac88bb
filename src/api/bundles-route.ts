/** GET /api/v2/erc20/multisigcontrol/signer/added/bundles: signer-added bundles, filtered and paged. */
import type { FastifyInstance } from 'fastify';
import type { QueryStore } from '../store/store.js';
import { setBlockHeaders } from './block-headers.js';
import { bundleCursors } from './cursor.js';
import { connectionJson, sendJson } from './envelope.js';
import { readBundleFilter, readPagination, wantsPretty } from './params.js';
import { readQuery } from './query.js';

export const BUNDLES_PATH = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

export async function bundlesRoute(app: FastifyInstance, { store }: { store: QueryStore }): Promise<void> {
  app.get(BUNDLES_PATH, async (request, reply) => {
    const query = readQuery(request.url);
    const page = readPagination(query, bundleCursors);
    const filter = readBundleFilter(query);
    const result = await store.listBundles(filter, page);
    setBlockHeaders(reply, result.lastBlock);
    return sendJson(reply, connectionJson('bundles', result, bundleCursors), wantsPretty(query));
  });
}
