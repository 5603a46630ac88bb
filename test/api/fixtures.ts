/** Hand-built blocks and small helpers shared by the API tests. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import type { Block } from '../../src/domain/block.js';
import type { BundleFilter, BundleKey, NodeSignature, SignerAdded } from '../../src/domain/bundle.js';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import type { Order, OrderFilter, OrderKey } from '../../src/domain/order.js';
import type { PageRequest } from '../../src/domain/page.js';
import type { QueryStore } from '../../src/store/store.js';
import { encodeOrder } from '../../src/wire/order-message.js';
import { createModelStore } from '../support/model.js';

/** A readable 64-hex id: `hexId('a', 5)` is 56 a's then 00000005. */
export function hexId(fill: string, n: number): string {
  return fill.repeat(56) + n.toString(16).padStart(8, '0');
}

export const T0 = 1_690_000_000_000_000_000n;

export function makeOrder(n: number, overrides: Partial<Order> = {}): Order {
  return {
    id: hexId('0', n),
    marketId: hexId('a', 1),
    partyId: hexId('b', 1),
    side: 1,
    price: '1000',
    size: 10n,
    remaining: 10n,
    timeInForce: TIF.GTC,
    type: TYPE.LIMIT,
    // A microsecond apart, with nanosecond digits as real events have: answers drop them.
    createdAt: T0 + BigInt(n) * 1000n + 7n,
    status: STATUS.ACTIVE,
    expiresAt: 0n,
    reference: `ref-${n}`,
    updatedAt: 0n,
    version: 1n,
    batchId: 0n,
    liquidityProvisionId: '',
    postOnly: false,
    reduceOnly: false,
    ...overrides,
  };
}

export function makeSignerAdded(n: number, overrides: Partial<SignerAdded> = {}): SignerAdded {
  return {
    signatureId: hexId('5', n),
    validatorId: hexId('e', 1),
    timestamp: T0 + BigInt(n) * 1000n + 1n,
    newSigner: `0x${'1'.repeat(36)}${n.toString(16).padStart(4, '0')}`,
    submitter: `0x${'2'.repeat(40)}`,
    nonce: String(1000 + n),
    epochSeq: 7n,
    ...overrides,
  };
}

export function makeSignature(signatureId: string, bytes: number[]): NodeSignature {
  return { id: signatureId, sig: Uint8Array.from(bytes), kind: 3 };
}

/** A block; its orders' messages are encoded from its orders unless given. */
export function makeBlock(height: number, contents: Partial<Omit<Block, 'height'>> = {}): Block {
  const orders = contents.orders ?? [];
  return {
    orderMessages: orders.map(encodeOrder),
    height: BigInt(height),
    time: T0 + BigInt(height) * 1_000_000_000n,
    hash: hexId('f', height),
    chainId: 'test-chain',
    orders: [],
    nodeSignatures: [],
    signersAdded: [],
    signersRemoved: [],
    ...contents,
  };
}

/** A QueryStore that records what the API asked of the model behind it. */
export interface SpyStore extends QueryStore {
  orderCalls: { filter: OrderFilter; page: PageRequest<OrderKey> }[];
  bundleCalls: { filter: BundleFilter; page: PageRequest<BundleKey> }[];
}

export function spyOn(store: QueryStore): SpyStore {
  const spy: SpyStore = {
    listRemovedBundles: (filter, page) => store.listRemovedBundles(filter, page),
    getOrder: (id, version) => store.getOrder(id, version),
    listOrderVersions: (id, page) => store.listOrderVersions(id, page),
    orderChanges: (after, upTo, maxBlocks) => store.orderChanges(after, upTo, maxBlocks),
    firstChangeHeight: () => store.firstChangeHeight(),
    watchBlocks: (onBlock) => store.watchBlocks(onBlock),
    orderCalls: [],
    bundleCalls: [],
    listOrders(filter, page) {
      spy.orderCalls.push({ filter, page });
      return store.listOrders(filter, page);
    },
    listBundles(filter, page) {
      spy.bundleCalls.push({ filter, page });
      return store.listBundles(filter, page);
    },
    lastBlock: () => store.lastBlock(),
    close: () => store.close(),
  };
  return spy;
}

export async function serverOver(blocks: Block[]): Promise<{ app: FastifyInstance; store: SpyStore }> {
  const store = spyOn(createModelStore(blocks));
  const app = await buildApp({ store });
  return { app, store };
}

export interface JsonReply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: unknown;
}

export async function get(app: FastifyInstance, url: string): Promise<JsonReply> {
  const res = await app.inject({ method: 'GET', url });
  return { status: res.statusCode, headers: res.headers, body: res.body, json: JSON.parse(res.body) };
}

export interface Connection {
  edges: { node: Record<string, unknown>; cursor: string }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

export interface ErrorReply {
  code: number;
  message: string;
  details: { '@type': string; code: number; message: string; inner: string }[];
}

/** Asserts the original's error body: status, gRPC code, detail code, and a message naming each of `mentions`. */
export function assertErrorReply(
  reply: JsonReply,
  status: number,
  grpcCode: number,
  detailCode: number | undefined,
  ...mentions: string[]
): void {
  const body = reply.json as ErrorReply;
  assert.equal(reply.status, status, reply.body);
  assert.match(String(reply.headers['content-type']), /^application\/json/);
  assert.deepEqual(Object.keys(body), ['code', 'message', 'details']);
  assert.equal(body.code, grpcCode);
  assert.equal(typeof body.message, 'string');
  if (detailCode === undefined) {
    assert.deepEqual(body.details, []);
  } else {
    assert.equal(body.details.length, 1);
    const detail = body.details[0]!;
    assert.deepEqual(Object.keys(detail), ['@type', 'code', 'message', 'inner']);
    assert.equal(detail['@type'], 'type.googleapis.com/vega.ErrorDetail');
    assert.equal(detail.code, detailCode);
    assert.ok(detail.inner.length > 0);
  }
  for (const m of mentions) {
    assert.ok(body.message.includes(m), `${JSON.stringify(body.message)} should mention ${m}`);
  }
}

export async function connection(app: FastifyInstance, field: 'orders' | 'bundles', url: string): Promise<Connection> {
  const reply = await get(app, url);
  assert.equal(reply.status, 200, reply.body);
  const body = reply.json as Record<string, Connection>;
  assert.deepEqual(Object.keys(body), [field]);
  const conn = body[field]!;
  assert.equal(conn.pageInfo.startCursor, conn.edges[0]?.cursor ?? '');
  assert.equal(conn.pageInfo.endCursor, conn.edges.at(-1)?.cursor ?? '');
  return conn;
}

function withParam(url: string, param: string): string {
  return url + (url.includes('?') ? '&' : '?') + param;
}

/**
 * Pages through a whole listing with `size` rows per page, forward from the
 * start (first/after) or backward from the end (last/before), checking the page
 * info of every page; returns the edges in listing order.
 */
export async function walk(
  app: FastifyInstance,
  field: 'orders' | 'bundles',
  url: string,
  size: number,
  direction: 'forward' | 'backward',
): Promise<Connection['edges']> {
  const pages: Connection['edges'][] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 10_000; n++) {
    const pageUrl = direction === 'forward'
      ? withParam(url, `pagination.first=${size}${cursor ? `&pagination.after=${cursor}` : ''}`)
      : withParam(url, `pagination.last=${size}${cursor ? `&pagination.before=${cursor}` : ''}`);
    const conn = await connection(app, field, pageUrl);
    assert.ok(conn.edges.length <= size);
    const more = direction === 'forward' ? conn.pageInfo.hasNextPage : conn.pageInfo.hasPreviousPage;
    const behind = direction === 'forward' ? conn.pageInfo.hasPreviousPage : conn.pageInfo.hasNextPage;
    assert.equal(behind, cursor !== undefined, `page ${n}: rows behind the cursor`);
    if (more) assert.equal(conn.edges.length, size, `page ${n}: a page with more beyond is full`);
    pages.push(conn.edges);
    if (!more) break;
    cursor = direction === 'forward' ? conn.pageInfo.endCursor : conn.pageInfo.startCursor;
  }
  if (direction === 'backward') pages.reverse();
  return pages.flat();
}
