/**
 * Random orders, random filters in random spellings, random page walks: the
 * API must list exactly the filtered rows, in order, and every page must be the
 * slice index arithmetic says it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { buildApp } from '../../src/api/app.js';
import { OrderStatus, OrderType, TimeInForce, type EnumTable } from '../../src/domain/enums.js';
import type { OrderFilter } from '../../src/domain/order.js';
import { createModelStore, orderRows, replay } from '../support/model.js';
import { T0, connection, hexId, makeBlock, makeOrder, walk } from './fixtures.js';

const PARTIES = [hexId('b', 1), hexId('b', 2), 'network'];
const MARKETS = [hexId('a', 1), hexId('a', 2)];
const REFERENCES = ['x', 'y', ''];

const orderSpec = fc.record({
  createdAt: fc.integer({ min: -3, max: 8 }),
  status: fc.integer({ min: 0, max: 8 }),
  type: fc.integer({ min: 0, max: 3 }),
  timeInForce: fc.integer({ min: 0, max: 6 }),
  party: fc.integer({ min: 0, max: 2 }),
  market: fc.integer({ min: 0, max: 1 }),
  liquidity: fc.boolean(),
  reference: fc.integer({ min: 0, max: 2 }),
});

const spelling = fc.record({ snake: fc.boolean(), commas: fc.boolean(), numbers: fc.boolean(), upper: fc.boolean() });
type Spelling = { snake: boolean; commas: boolean; numbers: boolean; upper: boolean };

const FILTER_KEYS = [
  'statuses', 'types', 'timeInForces', 'excludeLiquidity', 'partyIds', 'marketIds', 'reference', 'start', 'end', 'liveOnly',
] as const;

/** A few filters at a time (more would almost always match nothing). */
const filterSpec = fc
  .tuple(
    fc.record({
      statuses: fc.uniqueArray(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 4 }),
      types: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 2 }),
      timeInForces: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 4 }),
      excludeLiquidity: fc.constant(true),
      partyIds: fc.uniqueArray(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 2 }),
      marketIds: fc.uniqueArray(fc.integer({ min: 0, max: 1 }), { minLength: 1, maxLength: 1 }),
      reference: fc.integer({ min: 0, max: 2 }),
      start: fc.integer({ min: -4, max: 8 }),
      end: fc.integer({ min: 0, max: 9 }),
      liveOnly: fc.constant(true),
    }),
    fc.subarray([...FILTER_KEYS], { maxLength: 3 }),
  )
  .map(([all, chosen]) => Object.fromEntries(chosen.map((k) => [k, all[k]])) as FilterSpec);
type FilterSpec = {
  statuses?: number[]; types?: number[]; timeInForces?: number[]; excludeLiquidity?: boolean;
  partyIds?: number[]; marketIds?: number[]; reference?: number; start?: number; end?: number; liveOnly?: boolean;
};

function name(camel: string, s: Spelling): string {
  return s.snake ? camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : camel;
}

function listParam(key: string, values: string[], s: Spelling): string {
  return s.commas
    ? `${key}=${values.map(encodeURIComponent).join(',')}`
    : values.map((v) => `${key}=${encodeURIComponent(v)}`).join('&');
}

function enumValues(table: EnumTable, ns: number[], s: Spelling): string[] {
  return ns.map((n) => (s.numbers ? String(n) : table.names[n]!));
}

/** The query string for a filter, and the OrderFilter it must mean. */
function toQuery(f: FilterSpec, s: Spelling): { qs: string[]; filter: OrderFilter } {
  const qs: string[] = [];
  const filter: OrderFilter = {};
  if (f.statuses) {
    qs.push(listParam(name('filter.statuses', s), enumValues(OrderStatus, f.statuses, s), s));
    filter.statuses = f.statuses;
  }
  if (f.types) {
    qs.push(listParam(name('filter.types', s), enumValues(OrderType, f.types, s), s));
    filter.types = f.types;
  }
  if (f.timeInForces) {
    qs.push(listParam(name('filter.timeInForces', s), enumValues(TimeInForce, f.timeInForces, s), s));
    filter.timeInForces = f.timeInForces;
  }
  if (f.excludeLiquidity) {
    qs.push(`${name('filter.excludeLiquidity', s)}=${s.upper ? 'TRUE' : 't'}`);
    filter.excludeLiquidity = true;
  }
  if (f.partyIds) {
    const ids = f.partyIds.map((i) => PARTIES[i]!);
    qs.push(listParam(name('filter.partyIds', s), ids.map((id) => (s.upper && id !== 'network' ? id.toUpperCase() : id)), s));
    filter.partyIds = ids;
  }
  if (f.marketIds) {
    const ids = f.marketIds.map((i) => MARKETS[i]!);
    qs.push(listParam(name('filter.marketIds', s), ids.map((id) => (s.upper ? id.toUpperCase() : id)), s));
    filter.marketIds = ids;
  }
  if (f.reference !== undefined) {
    qs.push(`${name('filter.reference', s)}=${REFERENCES[f.reference]}`);
    filter.reference = REFERENCES[f.reference]!;
  }
  const start = f.start === undefined ? undefined : T0 + BigInt(f.start);
  const end = f.end === undefined ? undefined : T0 + BigInt(f.end);
  if (start !== undefined && end !== undefined && start > end) return toQuery({ ...f, end: undefined }, s);
  if (start !== undefined || end !== undefined) filter.dateRange = {};
  if (start !== undefined) {
    qs.push(`${name('filter.dateRange.startTimestamp', s)}=${start}`);
    filter.dateRange!.start = start;
  }
  if (end !== undefined) {
    qs.push(`${name('filter.dateRange.endTimestamp', s)}=${end}`);
    filter.dateRange!.end = end;
  }
  if (f.liveOnly) {
    qs.push(`${name('filter.liveOnly', s)}=1`);
    filter.liveOnly = true;
  }
  return { qs, filter };
}

test('the API lists exactly the filtered rows, and every page is the right slice', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(orderSpec, { minLength: 3, maxLength: 30 }),
      filterSpec,
      spelling,
      fc.boolean(),
      fc.integer({ min: 1, max: 7 }),
      fc.nat(),
      async (specs, filterSpec, s, newestFirst, size, pick) => {
        const orders = specs.map((o, i) =>
          makeOrder(i + 1, {
            createdAt: T0 + BigInt(o.createdAt),
            status: o.status,
            type: o.type,
            timeInForce: o.timeInForce,
            partyId: PARTIES[o.party]!,
            marketId: MARKETS[o.market]!,
            liquidityProvisionId: o.liquidity ? hexId('c', i) : '',
            reference: REFERENCES[o.reference]!,
          }),
        );
        const blocks = [makeBlock(1, { orders })];
        const { qs, filter } = toQuery(filterSpec, s);
        const expected = orderRows(replay(blocks), filter).map((r) => r.key.id);
        if (newestFirst) expected.reverse();

        const app = await buildApp({ store: createModelStore(blocks) });
        try {
          const url = `/api/v2/orders?${[...qs, `${name('pagination.newestFirst', s)}=${newestFirst}`].join('&')}`;
          const forward = await walk(app, 'orders', url, size, 'forward');
          assert.deepEqual(forward.map((e) => e.node.id), expected);
          const backward = await walk(app, 'orders', url, size, 'backward');
          assert.deepEqual(backward.map((e) => e.node.id), expected);

          if (forward.length > 0) {
            const i = pick % forward.length;
            const cursor = forward[i]!.cursor;
            const after = await connection(app, 'orders', `${url}&pagination.first=${size}&pagination.after=${cursor}`);
            assert.deepEqual(after.edges.map((e) => e.node.id), expected.slice(i + 1, i + 1 + size));
            assert.equal(after.pageInfo.hasNextPage, i + 1 + size < expected.length);
            assert.equal(after.pageInfo.hasPreviousPage, true);
            const before = await connection(app, 'orders', `${url}&pagination.last=${size}&pagination.before=${cursor}`);
            assert.deepEqual(before.edges.map((e) => e.node.id), expected.slice(Math.max(0, i - size), i));
            assert.equal(before.pageInfo.hasPreviousPage, i - size > 0);
            assert.equal(before.pageInfo.hasNextPage, true);
          }
        } finally {
          await app.close();
        }
      },
    ),
    { numRuns: 60 },
  );
});
