/**
 * The OpenAPI document (src/api/openapi/) against the server itself: it
 * lists exactly the routes served and, for each, exactly the parameters its
 * reader reads (found by spying on the reader, not listed here), once, its
 * other spelling named beside it, and no two a generated client would name
 * alike; every enum value it names is accepted, in either spelling; real answers match its
 * schemas; a client that knows only the document pages through every order;
 * and it validates as OpenAPI 3.1 (@seriousme/openapi-schema-validator).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { REMOVED_BUNDLES_PATH } from '../../src/api/bundles-route.js';
import { servedDocument } from '../../src/api/docs-route.js';
import { documentedParameters, openApiDocument } from '../../src/api/openapi/document.js';
import { ROUTE_DOCS } from '../../src/api/openapi/routes.js';
import { SCHEMAS } from '../../src/api/openapi/schemas.js';
import { ordersRoute } from '../../src/api/orders-route.js';
import { enumNames, protoName, type ParameterDecl } from '../../src/api/parameters.js';
import { canonicalName, QueryParams } from '../../src/api/query.js';
import { buildApp } from '../../src/api/app.js';
import { STREAM_ORDERS_PATH } from '../../src/api/stream/request.js';
import { OrderStatus, OrderType, TimeInForce } from '../../src/domain/enums.js';
import { openStore } from '../../src/store/open.js';
import type { QueryStore } from '../../src/store/store.js';
import { simulatedStore, type ServedStore } from '../support/served-stores.js';

type Json = Record<string, unknown>;
type Parameter = { name: string; in: string; schema: Json; description: string; 'x-aliases'?: string[] };
type Operation = { operationId: string; parameters: Parameter[]; responses: Record<string, Json> };

const doc = servedDocument().value;
const operations = Object.entries(doc.paths).map(([path, item]) => ({ path, op: item.get as unknown as Operation }));
const operation = (id: string) => operations.find((o) => o.op.operationId === id)!;

let served: ServedStore;
let store: QueryStore;
let app: FastifyInstance;
before(async () => {
  served = simulatedStore();
  store = await openStore({ dataDir: served.dataDir }, { readOnly: true });
  app = await buildApp({ store });
  await app.ready();
});
after(async () => {
  await app?.close();
  await store?.close();
  served?.remove();
});

/**
 * Every GET route Fastify serves, from its printed radix tree: each line a
 * segment under its parent's, a route where it says `(GET)`. (The tree
 * printed without common prefixes loses the path of a wildcard route.)
 */
function servedPaths(server: FastifyInstance): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of server.printRoutes({ method: 'GET' }).split('\n')) {
    const at = line.indexOf('── ');
    if (at < 0) continue;
    const depth = (at - 1) / 4;
    const served = / \(GET\)$/.test(line);
    const segment = line.slice(at + 3).replace(/ \(.*\)$/, '');
    const path = (depth === 0 ? '' : stack[depth - 1]!) + segment;
    stack[depth] = path;
    if (served) out.push(path);
  }
  return out;
}

test('the document lists every route served, and only those (the docs page and the document itself aside)', () => {
  // The order's routes are served under a prefix (`/api/v2/order/*`): the id is the rest of the path.
  const fastifyPath = (p: string) => p.replace(/\{orderId\}$/, '*').replace(/\{(\w+)\}/g, ':$1');
  // The stream is served outside Fastify (src/api/stream/attach.ts), so no route of Fastify's is it.
  const documented = Object.keys(doc.paths).filter((p) => p !== STREAM_ORDERS_PATH).map(fastifyPath).sort();
  const routes = servedPaths(app).filter((p) => !p.startsWith('/docs') && p !== '/api/v2/openapi.json').sort();
  assert.deepEqual(documented, routes);
  for (const path of ['/api/v2/orders', '/health', '/metrics', '/api/v2/order/*', '/api/v2/order/versions/*', REMOVED_BUNDLES_PATH]) {
    assert.ok(routes.includes(path), `${path} in ${routes.join(' ')}`);
  }
  // ...but it is documented, as what the server answers at its path.
  assert.equal((doc.paths[STREAM_ORDERS_PATH]?.get as unknown as Operation | undefined)?.operationId, 'observeOrders');
  assert.equal(ROUTE_DOCS.length, Object.keys(doc.paths).length);
});

/** A URL of the route with no query: its path parameter (an order id) given a well-formed value, so the reader reads on past it. */
function bareUrl(path: string): string {
  return path.replace(/\{orderId\}/g, 'ab'.repeat(32));
}

/** The canonical names a route's reader asks for, reading a URL of it with no parameter: found by spying on QueryParams. */
function namesRead(read: (url: string) => unknown, url: string): string[] {
  const asked = new Set<string>();
  const { all, has } = QueryParams.prototype;
  QueryParams.prototype.all = function (this: QueryParams, name: string) {
    asked.add(name);
    return all.call(this, name);
  };
  QueryParams.prototype.has = function (this: QueryParams, name: string) {
    asked.add(name);
    return has.call(this, name);
  };
  try {
    read(url);
  } finally {
    Object.assign(QueryParams.prototype, { all, has });
  }
  return [...asked].sort();
}

test('each route documents exactly the parameters its reader reads, each once, its proto spelling named beside it', () => {
  let checked = 0;
  const readers = new Set<string>();
  for (const route of ROUTE_DOCS) {
    const { op } = operation(route.operationId);
    const query = op.parameters.filter((p) => p.in === 'query');
    const read = route.read === undefined ? [] : namesRead(route.read, bareUrl(route.path));
    if (route.read !== undefined) readers.add(route.operationId);
    assert.deepEqual(query.map((p) => p.name).sort(), read, `${route.path}: documented vs read`);
    for (const param of query) {
      const proto = protoName(param.name);
      if (proto === param.name) {
        assert.equal(param['x-aliases'], undefined, param.name);
        continue;
      }
      assert.deepEqual(param['x-aliases'], [proto], `${route.path}: ${param.name}'s other spelling`);
      assert.ok(param.description.includes(`\`${proto}\``), `${route.path}: ${param.name}'s description names ${proto}`);
      // The proto spelling reads as the same parameter.
      assert.equal(canonicalName(proto), param.name);
    }
    checked += read.length;
  }
  assert.ok(checked >= 20, `only ${checked} parameters read`);
  // The companions' own readers among them: the stream's (outside Fastify) and the order's.
  for (const id of ['getOrder', 'listOrderVersions', 'observeOrders', 'listERC20MultiSigSignerRemovedBundles']) assert.ok(readers.has(id), id);
  const orders = operation('listOrders').op.parameters;
  for (const [name, alias] of [['filter.partyIds', 'filter.party_ids'], ['filter.dateRange.startTimestamp', 'filter.date_range.start_timestamp'], ['pagination.newestFirst', 'pagination.newest_first']]) {
    assert.deepEqual(orders.find((p) => p.name === name)?.['x-aliases'], [alias], name);
  }
});

test('no two parameters of an operation are one identifier to a client generator (paginationNewestFirst, pagination_newest_first)', () => {
  // What generators keep of a name: its letters and digits, case aside (camelCase and snake_case meet there).
  const identifier = (name: string) => name.replace(/[^A-Za-z0-9]/g, '').toLowerCase();
  for (const { path, op } of operations) {
    const seen = new Map<string, string>();
    for (const { name } of op.parameters) {
      const id = identifier(name);
      assert.ok(!seen.has(id), `${path}: ${name} and ${seen.get(id)} both make ${id}`);
      seen.set(id, name);
    }
  }
});

test('a parameter added to a route\'s declaration is in the document, with no other edit', () => {
  const added: ParameterDecl = { name: 'filter.newThing', in: 'query', schema: { type: 'string' }, description: 'new' };
  const route = { ...ordersRoute.doc, parameters: [...ordersRoute.doc.parameters, added] };
  const names = (openApiDocument([route]).paths[route.path]!.get.parameters as { name: string }[]).map((p) => p.name);
  assert.ok(names.includes('filter.newThing'), names.join(' '));
  assert.deepEqual(documentedParameters([added]).map((p) => [p.name, p['x-aliases']]), [['filter.newThing', ['filter.new_thing']]]);
});

test('the enums are the domain\'s, and every value the document names is accepted, in either spelling of its parameter', async () => {
  const enums: [string, string[]][] = [
    ['filter.statuses', enumNames(OrderStatus)], ['filter.types', enumNames(OrderType)], ['filter.timeInForces', enumNames(TimeInForce)],
  ];
  const params = operation('listOrders').op.parameters;
  for (const [name, values] of enums) {
    const param = params.find((p) => p.name === name)!;
    const items = (param.schema as { items: { enum: string[] } }).items;
    assert.deepEqual(items.enum, values, name);
    for (const spelling of [name, ...(param['x-aliases'] ?? [])]) {
      for (const value of items.enum) {
        const res = await app.inject(`/api/v2/orders?${spelling}=${value}&pagination.first=1`);
        assert.equal(res.statusCode, 200, `${spelling}=${value}: ${res.body}`);
      }
    }
  }
  assert.deepEqual((SCHEMAS.OrderStatus as { enum: string[] }).enum, enumNames(OrderStatus));
});

/** A validator of the document's schemas, through Fastify's own (Ajv): a body that does not match is a 400 saying why. */
async function schemaChecker(): Promise<{ check: (schema: string, value: unknown) => Promise<void>; close: () => Promise<void> }> {
  const v = Fastify({ ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, strict: false } } });
  v.addSchema({ $id: 'openapi', components: { schemas: SCHEMAS } });
  for (const name of Object.keys(SCHEMAS)) {
    v.post(`/${name}`, { schema: { body: { $ref: `openapi#/components/schemas/${name}` } } }, async () => 'ok');
  }
  await v.ready();
  return {
    check: async (schema, value) => {
      const res = await v.inject({ method: 'POST', url: `/${schema}`, payload: JSON.stringify(value), headers: { 'content-type': 'application/json' } });
      assert.equal(res.statusCode, 200, `${schema}: ${res.body} for ${JSON.stringify(value).slice(0, 300)}`);
    },
    close: () => v.close(),
  };
}

test('real answers match the document\'s schemas, and its examples are answers of the same shapes', async () => {
  const { check, close } = await schemaChecker();
  try {
    const orders = await app.inject('/api/v2/orders?pagination.first=5000');
    const body = orders.json() as { orders: { edges: { node: Json }[] } };
    assert.ok(body.orders.edges.length > 100, 'a network of orders');
    await check('ListOrdersResponse', body);
    // The simulator's orders are of every kind: pegged, iceberg, rejected with a reason.
    const keys = new Set(body.orders.edges.flatMap((e) => Object.keys(e.node)));
    for (const optional of ['reason', 'icebergOrder']) assert.ok(keys.has(optional), `some order has ${optional}`);
    assert.ok(body.orders.edges.some((e) => e.node.peggedOrder !== null), 'some order is pegged');
    await check('ListERC20MultiSigSignerAddedBundlesResponse', (await app.inject('/api/v2/erc20/multisigcontrol/signer/added/bundles')).json());
    await check('Health', (await app.inject('/health')).json());
    await check('Ready', (await app.inject('/ready')).json());
    await check('IngestStatus', (await app.inject('/api/v2/ingest/status')).json());
    for (const url of ['/api/v2/orders?pagination.first=0', '/api/v2/orders?filter.types=NOPE', '/nowhere']) {
      await check('Error', (await app.inject(url)).json());
    }
    // A node with a field the schema does not know fails: the check can fail.
    await assert.rejects(check('Order', { ...body.orders.edges[0]!.node, extra: 1 }), { name: 'AssertionError', message: /^Order: .*additional properties/ });
    // Every example in the document is checked against its response's schema.
    let examples = 0;
    for (const { op } of operations) {
      for (const response of Object.values(op.responses)) {
        const media = (response.content as Record<string, { schema: { $ref?: string }; example?: unknown; examples?: Record<string, { value: unknown }> }> | undefined)?.['application/json'];
        const name = media?.schema.$ref?.split('/').pop();
        if (media === undefined || name === undefined) continue;
        for (const value of [media.example, ...Object.values(media.examples ?? {}).map((e) => e.value)]) {
          if (value === undefined) continue;
          await check(name, value);
          examples++;
        }
      }
    }
    assert.ok(examples >= 6, `${examples} examples`);
  } finally {
    await close();
  }
});

test('a client that knows only the document pages through every order', async () => {
  const { path, op } = operation('listOrders');
  const param = (name: string) => op.parameters.find((p) => p.name === name)!.name;
  const answer = op.responses['200'] as { content: Record<string, { schema: { $ref: string } }> };
  const schema = SCHEMAS[answer.content['application/json']!.schema.$ref.split('/').pop()!] as { properties: Record<string, unknown> };
  const field = Object.keys(schema.properties)[0]!;
  type Connection = { edges: { node: { id: string }; cursor: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string; hasPreviousPage: boolean; startCursor: string } };
  const ids: string[] = [];
  let cursor = '';
  let pages = 0;
  do {
    const res = await app.inject(`${path}?${param('pagination.first')}=37${cursor && `&${param('pagination.after')}=${cursor}`}`);
    assert.equal(res.statusCode, 200, res.body);
    const page = (res.json() as Record<string, Connection>)[field]!;
    ids.push(...page.edges.map((e) => e.node.id));
    cursor = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : '';
    pages++;
  } while (cursor !== '' && pages < 1000);
  const all = ((await app.inject(`${path}?pagination.first=5000`)).json() as Record<string, Connection>)[field]!.edges.map((e) => e.node.id);
  assert.deepEqual(ids, all);
  assert.ok(pages > 3, `${pages} pages`);
});

test('the document is valid OpenAPI 3.1, and says that no operation needs credentials', async () => {
  const result = await new Validator().validate(structuredClone(doc));
  assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
  assert.equal(doc.openapi, '3.1.0');
  // Stated, not left out: linters (Redocly's recommended rules) refuse a document silent about it.
  assert.deepEqual((doc as Json).security, []);
  for (const { path, op } of operations) assert.equal((op as unknown as Json).security, undefined, `${path}: the root's rule holds`);
});
