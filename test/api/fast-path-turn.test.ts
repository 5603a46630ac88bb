/**
 * The fast path reads the last block once per turn of the event loop, where
 * the store can say it without waiting: requests handled in one turn share
 * the read (each arrived before the turn began), a request of a later turn
 * reads again, so a block committed between two turns is seen by the next
 * request. A kept answer is written at once (answer() returns true, no
 * promise); a miss goes through a promise.
 */
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { test } from 'node:test';
import { AnswerCache } from '../../src/api/answer-cache.js';
import { FastPath } from '../../src/api/fast-path.js';
import type { CommittedBlock, QueryStore } from '../../src/store/store.js';
import { WITHOUT_COMPANIONS } from '../support/without-companions.js';

const PATH = '/api/v2/orders';

function request(url: string): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = url;
  return { req, res: new ServerResponse(req) };
}

/** The head a response was written with (Node keeps it until a socket takes it). */
const headOf = (res: ServerResponse) => (res as ServerResponse & { _header: string | null })._header ?? '';

test('the last block is read once per turn, and again in the next: a block committed between turns is seen', async () => {
  let block: CommittedBlock = { height: 1n, time: 1_000_000n, chainId: 'c', hash: 'h' };
  let syncReads = 0;
  let pageReads = 0;
  const store: QueryStore = {
    ...WITHOUT_COMPANIONS,
    // The pages come from the endpoint's reader below: the store is asked only for its last block.
    listOrders: () => Promise.reject(new Error('not asked')),
    listBundles: () => Promise.reject(new Error('not asked')),
    lastBlock: async () => block,
    lastBlockSync: () => (syncReads++, block),
    close: async () => {},
  };
  const counted: { route: string; status: number }[] = [];
  const fastPath = new FastPath({
    cache: new AnswerCache(1 << 20), store, sharedDoor: [],
    tally: (route) => ({ add: (status) => counted.push({ route, status }) }),
    endpoints: [{
      path: PATH, prefix: false, route: PATH,
      reader: (url) => ({
        key: url, pretty: false, ignored: undefined,
        read: async () => (pageReads++, { body: Buffer.from(`{"height":${block.height}}`), lastBlock: block }),
      }),
    }],
  });
  const url = `${PATH}?pagination.first=1`;
  const first = request(url);
  const reading = fastPath.answer(first.req, first.res, [], 0);
  assert.ok(reading instanceof Promise, 'a URL not read before goes through a promise');
  assert.equal(await reading, true);
  assert.equal(pageReads, 1);
  await new Promise((resolve) => setImmediate(resolve));

  // Two requests in one turn: one read of the last block, both answered at once from the cache.
  const [a, b] = [request(url), request(url)];
  const readsBefore = syncReads;
  assert.equal(fastPath.answer(a.req, a.res, [], 0), true);
  assert.equal(fastPath.answer(b.req, b.res, [], 0), true);
  assert.equal(syncReads - readsBefore, 1, 'one read for the turn');
  assert.match(headOf(b.res), /X-Block-Height: 1\r\n/);
  assert.equal(pageReads, 1, 'kept');

  // A block commits; the next turn reads it, and its answer is read again.
  block = { height: 2n, time: 2_000_000n, chainId: 'c', hash: 'h2' };
  await new Promise((resolve) => setImmediate(resolve));
  const c = request(url);
  const answered = fastPath.answer(c.req, c.res, [], 0);
  assert.equal(syncReads - readsBefore, 2, 'the next turn reads the last block again');
  assert.equal(await answered, true);
  assert.equal(pageReads, 2, 'the new block\'s answer is read');
  assert.match(headOf(c.res), /X-Block-Height: 2\r\n/);
  assert.deepEqual(counted.map((x) => x.status), [200, 200, 200, 200], 'every answer counted as written');

  // Not a page of this path's: left to the full path, untouched.
  const other = request('/health');
  assert.equal(fastPath.answer(other.req, other.res, [], 0), false);
  assert.equal(other.res.headersSent, false);
});
