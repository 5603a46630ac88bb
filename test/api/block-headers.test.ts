/**
 * X-Block-Height and X-Block-Timestamp (docs/compatibility.md, section 7, "Block headers"): on every
 * answer of both query endpoints, pages and errors alike, naming the last
 * block stored when the answer was read; its time in whole microseconds; `0`
 * while no block is stored.
 */
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { test } from 'node:test';
import { buildApp } from '../../src/api/app.js';
import type { BlockStamp, Page } from '../../src/domain/page.js';
import type { CommittedBlock, QueryStore } from '../../src/store/store.js';
import { WITHOUT_COMPANIONS } from '../support/without-companions.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

/**
 * A store whose pages were read at `pageBlock` while its last block is now
 * `lastBlock`: the headers of a page must name the block of its own snapshot.
 */
function stubStore(pageBlock: BlockStamp | undefined, lastBlock: CommittedBlock | undefined): QueryStore {
  const page = <K>(): Page<K> => ({ rows: [], hasNextPage: false, hasPreviousPage: false, ...(pageBlock ? { lastBlock: pageBlock } : {}) });
  return { ...WITHOUT_COMPANIONS,
    listOrders: async () => page(),
    listBundles: async () => page(),
    lastBlock: async () => lastBlock,
    close: async () => {},
  };
}

const AT_1087 = { height: 1087n, time: 1678444165327608117n };
const NOW = { height: 1090n, time: 1678444168000000999n, chainId: 'c', hash: 'h' };

test('pages name the block of the snapshot they were read in, its time on the microsecond', async () => {
  const app = await buildApp({ store: stubStore(AT_1087, NOW) });
  for (const path of [ORDERS, BUNDLES]) {
    const res = await app.inject({ method: 'GET', url: `${path}?pagination.first=5` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-block-height'], '1087', path);
    assert.equal(res.headers['x-block-timestamp'], '1678444165327608000', path);
  }
  await app.close();
});

test('errors of both endpoints name the last block stored', async () => {
  const app = await buildApp({ store: stubStore(AT_1087, NOW) });
  for (const url of [`${ORDERS}?pagination.first=abc`, `${ORDERS}?filter.statuses=NOPE`, `${BUNDLES}?epochSeq=x`, `${ORDERS}?filter.reference=%zz`]) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 400, url);
    assert.equal(res.headers['x-block-height'], '1090', url);
    assert.equal(res.headers['x-block-timestamp'], '1678444168000000000', url);
  }
  await app.close();
});

test('before any block both headers are 0', async () => {
  const app = await buildApp({ store: stubStore(undefined, undefined) });
  for (const url of [ORDERS, BUNDLES, `${ORDERS}?pagination.last=0`]) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.headers['x-block-height'], '0', url);
    assert.equal(res.headers['x-block-timestamp'], '0', url);
  }
  await app.close();
});

test('the header names go on the wire as the original writes them, for scripts that grep for them', async () => {
  const app = await buildApp({ store: stubStore(AT_1087, NOW) });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    for (const accept of ['identity', 'gzip']) {
      const raw = await new Promise<string[]>((resolve, reject) => {
        httpGet(`${address}${ORDERS}`, { headers: { 'accept-encoding': accept } }, (res) => {
          res.resume();
          resolve(res.rawHeaders);
        }).on('error', reject);
      });
      const names = raw.filter((_, i) => i % 2 === 0);
      assert.ok(names.includes('X-Block-Height') && names.includes('X-Block-Timestamp'), `${accept}: ${names.join(', ')}`);
    }
  } finally {
    await app.close();
  }
});
