/**
 * A query parameter the endpoint does not take (a misspelt filter) is
 * ignored, as the original ignores it, and named in X-Ignored-Parameters:
 * on both list endpoints, answered by the fast path and by Fastify alike,
 * computed or kept, 200 or 304; both spellings the original takes (proto
 * and JSON names) are not ignored, and a page may read the header (CORS).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { buildApp } from '../../src/api/app.js';
import { createModelStore } from '../support/model.js';
import { hexId, makeBlock, makeOrder, makeSignerAdded } from './fixtures.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function ask(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A server answering through the fast path, and one through Fastify alone; each counts what reaches Fastify. */
async function both(t: TestContext) {
  const store = createModelStore([makeBlock(1, {
    orders: [makeOrder(1), makeOrder(2, { status: 2 }), makeOrder(3)],
    signersAdded: [makeSignerAdded(1), makeSignerAdded(2)],
  })]);
  const servers = [];
  for (const logRequests of [false, true]) {
    const app = await buildApp({ store, logRequests });
    let viaFastify = 0;
    app.addHook('onRequest', async () => void viaFastify++);
    await app.listen({ host: '127.0.0.1', port: 0 });
    t.after(() => app.close());
    const { port } = app.server.address() as AddressInfo;
    servers.push({ name: logRequests ? 'Fastify' : 'fast path', port, viaFastify: () => viaFastify });
  }
  return servers;
}

const ignored = (a: Answer) => a.headers['x-ignored-parameters'];

test('a misspelt filter is ignored, as the original ignores it, and named in X-Ignored-Parameters on both paths, computed or kept', async (t) => {
  for (const server of await both(t)) {
    const misspelt = await ask(server.port, `${ORDERS}?filter.status=STATUS_CANCELLED&pagination.first=10`);
    const unfiltered = await ask(server.port, `${ORDERS}?pagination.first=10`);
    assert.equal(misspelt.status, 200, server.name);
    assert.equal(ignored(misspelt), 'filter.status', server.name);
    assert.equal(misspelt.body, unfiltered.body, `${server.name}: the filter did nothing`);
    assert.equal(ignored(unfiltered), undefined, `${server.name}: nothing ignored, no header`);
    const again = await ask(server.port, `${ORDERS}?filter.status=STATUS_CANCELLED&pagination.first=10`);
    assert.equal(ignored(again), 'filter.status', `${server.name}: the kept answer names it too`);
    const etag = String(again.headers.etag);
    const notModified = await ask(server.port, `${ORDERS}?filter.status=STATUS_CANCELLED&pagination.first=10`, { 'if-none-match': etag });
    assert.equal(notModified.status, 304);
    assert.equal(ignored(notModified), 'filter.status', `${server.name}: a 304 names it too`);
    assert.match(String(misspelt.headers['access-control-expose-headers']), /X-Ignored-Parameters/, 'a page may read it');
  }
  const [fast, full] = await both(t);
  await ask(fast!.port, `${ORDERS}?filter.status=1`);
  await ask(full!.port, `${ORDERS}?filter.status=1`);
  assert.equal(fast!.viaFastify(), 0, 'the fast path answered without Fastify');
  assert.equal(full!.viaFastify(), 1);
});

test('both spellings the original takes, proto and JSON names, are not ignored; every other key is, as the client spelled it', async (t) => {
  const party = hexId('a', 1);
  for (const server of await both(t)) {
    const taken = [
      `${ORDERS}?filter.statuses=STATUS_ACTIVE&filter.time_in_forces=1&filter.timeInForces=1&filter.party_ids=${party}&filter.exclude_liquidity=true`
        + '&filter.date_range.start_timestamp=0&filter.dateRange.endTimestamp=9&filter.live_only=false&filter.reference=r&filter.types=1'
        + `&filter.market_ids=${party}&pagination.first=2&pagination.newest_first=false&pretty`,
      `${ORDERS}?pagination.last=2&pagination.before=&filter.partyIds=${party}&filter.marketIds=${party}&filter.excludeLiquidity=0&filter.liveOnly=1`,
      `${BUNDLES}?node_id=&submitter=&epochSeq=&pagination.first=1&pagination.after=`, `${BUNDLES}?nodeId=&epoch_seq=`,
    ];
    for (const url of taken) {
      const answer = await ask(server.port, url);
      assert.equal(answer.status, 200, `${server.name}: ${url}: ${answer.body}`);
      assert.equal(ignored(answer), undefined, `${server.name}: ${url}`);
    }
    const junk = await ask(server.port, `${BUNDLES}?nodeID=x&epoch=7&foo_bar=1&fooBar=2&foo_bar=3&pagination.size=5&%C3%A9%2Cx=1`);
    assert.equal(junk.status, 200, junk.body);
    assert.equal(ignored(junk), 'nodeID, epoch, foo_bar, fooBar, pagination.size, %C3%A9%2Cx',
      `${server.name}: each key once, as sent, %-escaped`);
    const many = Array.from({ length: 40 }, (_, i) => `x${i}=1`).join('&');
    assert.match(String(ignored(await ask(server.port, `${ORDERS}?${many}`))), /^x0, x1, .*, x31, \.\.\.8 more$/, 'bounded');
  }
});

test('a refused parameter is refused as before: the header belongs to answers only', async (t) => {
  for (const server of await both(t)) {
    const answer = await ask(server.port, `${ORDERS}?filter.statuses=NOPE&filter.status=1`);
    assert.equal(answer.status, 400);
    assert.equal(ignored(answer), undefined);
  }
});
