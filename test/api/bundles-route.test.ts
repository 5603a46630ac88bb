import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { bundleCursors, orderCursors } from '../../src/api/cursor.js';
import type { SignerAdded } from '../../src/domain/bundle.js';
import {
  T0,
  assertErrorReply,
  connection,
  get,
  hexId,
  makeBlock,
  makeSignature,
  makeSignerAdded,
  serverOver,
  walk,
  type SpyStore,
} from './fixtures.js';

const PATH = '/api/v2/erc20/multisigcontrol/signer/added/bundles';
const V1 = hexId('e', 1);
const V2 = hexId('e', 2);
const S1 = `0x${'ab'.repeat(20)}`;
const S2 = `0x${'cd'.repeat(20)}`;
const sigId = (n: number) => hexId('5', n);
const MAX_U64 = 18446744073709551615n;

/** Listed ascending by (timestamp on the microsecond, signatureId): 6, 1, 2, 3, 4, 5 (3 and 4 share a microsecond). */
const b = (n: number, x: Partial<SignerAdded>) => makeSignerAdded(n, x);
const bundles = {
  1: b(1, { validatorId: V1, submitter: S1, epochSeq: 1n }),
  2: b(2, { validatorId: V2, submitter: S2, epochSeq: 1n }),
  3: b(3, { validatorId: V1, submitter: S2, epochSeq: 2n }),
  4: b(4, { validatorId: V2, submitter: S1, epochSeq: 2n, timestamp: T0 + 3999n }),
  // Mixed case in the event: matched case-insensitively.
  5: b(5, { validatorId: V1.toUpperCase(), submitter: S1.toUpperCase().replace('0X', '0x'), epochSeq: 3n }),
  6: b(6, { validatorId: V2, submitter: S2, epochSeq: MAX_U64, timestamp: T0 - 10n }),
} satisfies Record<number, SignerAdded>;

const blocks = [
  makeBlock(1, {
    // Signatures may arrive before their bundle.
    nodeSignatures: [makeSignature(sigId(1), [0x02, 0x01]), makeSignature(sigId(1), [0x01, 0xff]), makeSignature(hexId('9', 9), [0x00])],
  }),
  makeBlock(2, {
    signersAdded: [bundles[1], bundles[2], bundles[3], bundles[4], { ...bundles[5], nonce: 'first' }, bundles[6]],
    nodeSignatures: [makeSignature(sigId(4), [0x01, 0x00]), makeSignature(sigId(4), [0x01])],
  }),
  makeBlock(3, {
    // ... or after it; a repeated signature counts once.
    nodeSignatures: [makeSignature(sigId(3), [0xaa]), makeSignature(sigId(1), [0x02, 0x01])],
    signersAdded: [{ ...bundles[5], nonce: 'second' }],
  }),
];

const ASCENDING = [6, 1, 2, 3, 4, 5];
const newestFirst = (ns: number[]) => [...ns].reverse();

let app: FastifyInstance;
let store: SpyStore;

before(async () => {
  ({ app, store } = await serverOver(blocks));
});
after(() => app.close());

/** Bundle numbers of a listing, recognised by their nonce (1000 + n, or the replaced bundle 5). */
async function numbers(url: string): Promise<number[]> {
  const conn = await connection(app, 'bundles', url);
  return conn.edges.map((e) => (e.node.nonce === 'second' ? 5 : Number(e.node.nonce) - 1000));
}

describe('GET /api/v2/erc20/multisigcontrol/signer/added/bundles', () => {
  test('lists bundles newest first with packed signatures', async () => {
    const conn = await connection(app, 'bundles', PATH);
    assert.deepEqual(conn.pageInfo.hasNextPage, false);
    assert.deepEqual(conn.pageInfo.hasPreviousPage, false);
    const nodes = conn.edges.map((e) => e.node);
    assert.deepEqual(nodes.map((n) => n.nonce), ['second', '1004', '1003', '1002', '1001', '1006']);
    assert.deepEqual(nodes[4], {
      newSigner: bundles[1].newSigner,
      submitter: S1,
      nonce: '1001',
      timestamp: String(T0 + 1000n),
      signatures: '0x01ff0201',
      epochSeq: '1',
    });
    assert.equal(nodes[3]?.signatures, '', 'no signature yet');
    assert.equal(nodes[2]?.signatures, '0xaa', 'signature arriving after the bundle');
    assert.equal(nodes[1]?.signatures, '0x010100', 'ascending byte order: a prefix comes first');
    assert.equal(nodes[5]?.epochSeq, MAX_U64.toString());
    assert.equal(nodes[5]?.timestamp, String(T0 - 1000n), 'on the microsecond, rounded down');
  });

  test('oldest first is exactly the reverse', async () => {
    assert.deepEqual(await numbers(`${PATH}?pagination.newestFirst=false`), ASCENDING);
    assert.deepEqual(await numbers(`${PATH}?pagination.newest_first=f`), ASCENDING);
  });

  const filterCases: [string, number[]][] = [
    [`nodeId=${V1}`, [1, 3, 5]],
    [`node_id=${V1.toUpperCase()}`, [1, 3, 5]],
    [`nodeId=${V2}`, [6, 2, 4]],
    [`nodeId=${hexId('e', 3)}`, []],
    [`submitter=${S1}`, [1, 4, 5]],
    [`submitter=${S1.toUpperCase().replace('0X', '0x')}`, [1, 4, 5]],
    [`submitter=${S2.toUpperCase()}`, [6, 2, 3]],
    ['epochSeq=1', [1, 2]],
    ['epoch_seq=2', [3, 4]],
    ['epochSeq=002', [3, 4]],
    [`epochSeq=${MAX_U64}`, [6]],
    ['epochSeq=4', []],
    [`nodeId=${V1}&epochSeq=2`, [3]],
    [`nodeId=${V1}&submitter=${S1}`, [1, 5]],
    [`nodeId=${V2}&submitter=${S1}&epochSeq=2`, [4]],
    ['nodeId=&submitter=&epochSeq=', ASCENDING],
    ['filter.statuses=STATUS_BOGUS&other=1', ASCENDING],
  ];
  for (const [qs, expected] of filterCases) {
    test(`filter ${qs}`, async () => {
      assert.deepEqual(await numbers(`${PATH}?${qs}`), newestFirst(expected));
      assert.deepEqual(await numbers(`${PATH}?${qs}&pagination.newestFirst=false`), expected);
    });
  }

  test('filters and paging reach the store normalized', async () => {
    store.bundleCalls.length = 0;
    const cursor = bundleCursors.encode({ timestamp: 5n, signatureId: sigId(1) });
    await get(app, `${PATH}?node_id=${V1.toUpperCase()}&submitter=${S1.toUpperCase()}&epoch_seq=9&pagination.last=4&pagination.before=${cursor}`);
    assert.deepEqual(store.bundleCalls, [{
      filter: { nodeId: V1, submitter: S1, epochSeq: 9n },
      page: { newestFirst: true, mode: 'last', limit: 4, cursor: { timestamp: 5n, signatureId: sigId(1) } },
    }]);
  });

  test('paging forward and backward visits every bundle once, in order', async () => {
    for (const order of ['true', 'false']) {
      const expected = order === 'true' ? newestFirst(ASCENDING) : ASCENDING;
      for (const size of [1, 2, 4, 6, 7]) {
        const url = `${PATH}?pagination.newestFirst=${order}`;
        const forward = await walk(app, 'bundles', url, size, 'forward');
        const backward = await walk(app, 'bundles', url, size, 'backward');
        const n = (e: { node: Record<string, unknown> }) => (e.node.nonce === 'second' ? 5 : Number(e.node.nonce) - 1000);
        assert.deepEqual(forward.map(n), expected, `forward ${order} ${size}`);
        assert.deepEqual(backward.map(n), expected, `backward ${order} ${size}`);
      }
    }
  });

  test('exact page info', async () => {
    const firstTwo = await connection(app, 'bundles', `${PATH}?pagination.first=2`);
    assert.equal(firstTwo.pageInfo.hasNextPage, true);
    assert.equal(firstTwo.pageInfo.hasPreviousPage, false);
    const next = await connection(app, 'bundles', `${PATH}?pagination.first=4&pagination.after=${firstTwo.pageInfo.endCursor}`);
    assert.equal(next.edges.length, 4);
    assert.equal(next.pageInfo.hasNextPage, false);
    assert.equal(next.pageInfo.hasPreviousPage, true);
    const back = await connection(app, 'bundles', `${PATH}?pagination.before=${next.pageInfo.startCursor}`);
    assert.deepEqual(back.edges, firstTwo.edges);
    assert.equal(back.pageInfo.hasNextPage, true);
    assert.equal(back.pageInfo.hasPreviousPage, false);
    const empty = await connection(app, 'bundles', `${PATH}?epochSeq=77`);
    assert.deepEqual(empty.pageInfo, { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' });
  });

  const badCases: [string, number, ...string[]][] = [
    ['nodeId=xyz', 10029, 'nodeId', '"xyz"'],
    [`node_id=${V1}0`, 10029, 'node_id', `"${V1}0"`],
    ['submitter=0x123', 10029, 'submitter', '"0x123"'],
    [`submitter=${'ab'.repeat(20)}`, 10029, 'submitter', 'ab'.repeat(20)],
    ['epochSeq=abc', 10036, 'epochSeq', '"abc"'],
    ['epoch_seq=-1', 10036, 'epoch_seq', '"-1"'],
    ['epochSeq=1.5', 10036, 'epochSeq', '"1.5"'],
    ['epochSeq=18446744073709551616', 10036, 'epochSeq', '"18446744073709551616"'],
    ['pagination.last=0', 10028, 'pagination.last', '"0"'],
    ['pagination.first=1&pagination.last=1', 10028, 'pagination.first', 'pagination.last'],
    ['pagination.before=%3D%3D', 10028, 'pagination.before', '"=="'],
  ];
  for (const [qs, detailCode, ...mentions] of badCases) {
    test(`400 for ${qs}`, async () => {
      assertErrorReply(await get(app, `${PATH}?${qs}`), 400, 3, detailCode, ...mentions);
    });
  }

  test('the epoch id error carries the original detail', async () => {
    const reply = await get(app, `${PATH}?epochSeq=x1`);
    const body = reply.json as { details: { message: string }[] };
    assert.equal(body.details[0]?.message, 'failed to parse epoch id');
  });

  test('an orders cursor, or a garbled one, is a 400', async () => {
    const orderCursor = orderCursors.encode({ createdAt: T0 + 1n, id: sigId(1) });
    assertErrorReply(await get(app, `${PATH}?pagination.after=${orderCursor}`), 400, 3, 10028, 'pagination.after', orderCursor);
    const real = (await connection(app, 'bundles', `${PATH}?pagination.first=1`)).pageInfo.endCursor;
    const garbled = real.split('').reverse().join('');
    assertErrorReply(await get(app, `${PATH}?pagination.before=${garbled}`), 400, 3, 10028, 'pagination.before', garbled);
  });
});
