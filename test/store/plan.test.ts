/** The backend-neutral planner: page scans, page assembly, key ranges, filter normalisation, index choice. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import { InternalError } from '../../src/errors.js';
import type { OrderKey } from '../../src/domain/order.js';
import type { PageRequest, PageRow } from '../../src/domain/page.js';
import {
  MAX_BRANCHES,
  MAX_PAGE_PARAMETERS,
  ORDER_PATHS,
  assemblePage,
  normalizeOrderFilter,
  orderKeyRange,
  planBundleQuery,
  planOrderQuery,
  planPage,
  type OrderStats,
} from '../../src/store/plan.js';

test('planPage: forward pages walk the listing order, backward pages walk against it, beyond-checks include the cursor', () => {
  const cases: [boolean, 'first' | 'last', string, string, string][] = [
    // newestFirst, mode, walk, bound from cursor, beyond (direction bound)
    [true, 'first', 'desc', '<', 'asc >='],
    [true, 'last', 'asc', '>', 'desc <='],
    [false, 'first', 'asc', '>', 'desc <='],
    [false, 'last', 'desc', '<', 'asc >='],
  ];
  for (const [newestFirst, mode, walk, bound, beyond] of cases) {
    const noCursor = planPage<number>({ newestFirst, mode, limit: 10 });
    assert.deepEqual(noCursor, { rows: { direction: walk, limit: 11 } });
    const p = planPage<number>({ newestFirst, mode, limit: 10, cursor: 5 });
    assert.deepEqual(p.rows, { direction: walk, limit: 11, from: { key: 5, bound } });
    assert.equal(`${p.beyond?.direction} ${p.beyond?.from?.bound}`, beyond);
    assert.equal(p.beyond?.limit, 1);
  }
  assert.throws(() => planPage({ newestFirst: true, mode: 'first', limit: 0 }), InternalError);
  assert.throws(() => planPage({ newestFirst: true, mode: 'first', limit: 1.5 }), InternalError);
});

test('assemblePage: trims the extra row, flips backward pages, sets both flags exactly', () => {
  const rows = (...keys: number[]): PageRow<number>[] => keys.map((key) => ({ json: `{"k":${key}}`, key }));
  const first: PageRequest<number> = { newestFirst: true, mode: 'first', limit: 2 };
  assert.deepEqual(assemblePage(first, rows(9, 8, 7), true), { rows: rows(9, 8), hasNextPage: true, hasPreviousPage: true });
  assert.deepEqual(assemblePage(first, rows(9, 8), false), { rows: rows(9, 8), hasNextPage: false, hasPreviousPage: false });
  assert.deepEqual(assemblePage(first, [], true), { rows: [], hasNextPage: false, hasPreviousPage: true });
  const last: PageRequest<number> = { newestFirst: true, mode: 'last', limit: 2 };
  // A backward walk found 3, 4, 5 (nearest the cursor first): the page is 4, 3 in listing order.
  assert.deepEqual(assemblePage(last, rows(3, 4, 5), false), { rows: rows(4, 3), hasNextPage: false, hasPreviousPage: true });
  assert.deepEqual(assemblePage(last, rows(3), true), { rows: rows(3), hasNextPage: true, hasPreviousPage: false });
});

const key = (t: bigint, id: string): OrderKey => ({ createdAt: t, id });
const HIGHEST = 'f'.repeat(64);
const B = 'b'.repeat(64);

test('orderKeyRange: the date range becomes key bounds, and the tighter of cursor and date wins', () => {
  const desc = { direction: 'desc' as const, limit: 5, from: { key: key(50n, B), bound: '<' as const } };
  assert.deepEqual(orderKeyRange(desc, undefined), { upper: { key: key(50n, B), inclusive: false } });
  // The end date is before the cursor: it bounds the range; the start is a lower bound. Among
  // the keys of one time the highest id comes first (ids descend as keys ascend).
  assert.deepEqual(orderKeyRange(desc, { start: 10n, end: 40n }), {
    lower: { key: key(10n, HIGHEST), inclusive: true },
    upper: { key: key(40n, HIGHEST), inclusive: false },
  });
  // The cursor is before the end date: the cursor bounds it.
  assert.deepEqual(orderKeyRange(desc, { end: 60n }), { upper: { key: key(50n, B), inclusive: false } });
  // Same time: (50, highest id) comes before (50, b...), so the end date is tighter.
  assert.deepEqual(orderKeyRange(desc, { end: 50n }).upper, { key: key(50n, HIGHEST), inclusive: false });
  // ...and a cursor at (50, lowest id) comes after it: then the cursor is tighter.
  const low = { direction: 'desc' as const, limit: 5, from: { key: key(50n, '0'.repeat(64)), bound: '<' as const } };
  assert.deepEqual(orderKeyRange(low, { end: 51n }).upper, { key: key(50n, '0'.repeat(64)), inclusive: false });
  const ascInclusive = { direction: 'asc' as const, limit: 1, from: { key: key(20n, HIGHEST), bound: '>=' as const } };
  // Equal keys: the exclusive end is tighter than the inclusive one; here both are inclusive starts.
  assert.deepEqual(orderKeyRange(ascInclusive, { start: 20n }).lower, { key: key(20n, HIGHEST), inclusive: true });
  const ascExclusive = { direction: 'asc' as const, limit: 1, from: { key: key(20n, HIGHEST), bound: '>' as const } };
  assert.deepEqual(orderKeyRange(ascExclusive, { start: 20n }).lower, { key: key(20n, HIGHEST), inclusive: false });
  assert.deepEqual(orderKeyRange({ direction: 'asc', limit: 1 }, {}), {});
});

test('normalizeOrderFilter: dedupes, drops values liveOnly rules out, and spots filters nothing can match', () => {
  assert.deepEqual(normalizeOrderFilter({ statuses: [1, 1, 5], partyIds: ['a', 'a'] }), { statuses: [1, 5], partyIds: ['a'] });
  assert.deepEqual(
    normalizeOrderFilter({ liveOnly: true, statuses: [STATUS.ACTIVE, STATUS.FILLED], types: [TYPE.LIMIT, TYPE.MARKET], timeInForces: [TIF.GTC, TIF.IOC] }),
    { liveOnly: true, statuses: [STATUS.ACTIVE], types: [TYPE.LIMIT], timeInForces: [TIF.GTC] },
  );
  assert.equal(normalizeOrderFilter({ liveOnly: true, statuses: [STATUS.FILLED] }), undefined);
  assert.equal(normalizeOrderFilter({ liveOnly: true, timeInForces: [TIF.FOK] }), undefined);
  assert.equal(normalizeOrderFilter({ marketIds: [] }), undefined);
  assert.equal(normalizeOrderFilter({ dateRange: { start: 5000n, end: 5000n } }), undefined);
  assert.deepEqual(normalizeOrderFilter({ dateRange: { start: 5000n }, excludeLiquidity: false, reference: '' }), { dateRange: { start: 5000n }, reference: '' });
});

test('normalizeOrderFilter: date bounds go onto the microsecond grid, rounding down, as createdAt does', () => {
  assert.deepEqual(normalizeOrderFilter({ dateRange: { start: 1_678_444_076_736_102_285n, end: 1_678_444_076_736_103_001n } }),
    { dateRange: { start: 1_678_444_076_736_102_000n, end: 1_678_444_076_736_103_000n } });
  // Both in one microsecond: an end that is exclusive leaves nothing.
  assert.equal(normalizeOrderFilter({ dateRange: { start: 1500n, end: 1999n } }), undefined);
  assert.deepEqual(normalizeOrderFilter({ dateRange: { start: -1500n, end: -1n } }), { dateRange: { start: -2000n, end: -1000n } });
});

/** A million orders: few rejected, fewer parked, 2% live, few network orders. */
const stats: OrderStats = {
  total: 1_000_000,
  live: 20_000,
  count(dimension, value) {
    const table: Record<string, Record<number, number>> = {
      status: { 1: 18_000, 2: 30_000, 3: 400_000, 5: 530_000, 6: 5_000, 8: 2_000, 4: 15_000 },
      type: { 1: 950_000, 2: 45_000, 3: 5_000 },
      timeInForce: { 1: 800_000, 2: 100_000, 3: 50_000, 4: 40_000, 5: 2_000, 6: 8_000 },
    };
    return table[dimension]?.[value] ?? 0;
  },
};

test('planOrderQuery: the most selective index drives, IN lists become branches, the rest is residual', () => {
  const plan = (f: Parameters<typeof planOrderQuery>[0]) => planOrderQuery(f, stats)!;
  assert.equal(plan({}).path, ORDER_PATHS.time);
  assert.equal(plan({ excludeLiquidity: true }).path, ORDER_PATHS.time);

  const rare = plan({ statuses: [STATUS.REJECTED, STATUS.PARKED] });
  assert.equal(rare.path, ORDER_PATHS.status);
  assert.deepEqual(rare.branches, [[STATUS.REJECTED], [STATUS.PARKED]]);
  assert.deepEqual(rare.residual, {});

  // Nearly every order: one walk of the time index beats nine branches.
  assert.equal(plan({ statuses: [0, 1, 2, 3, 4, 5, 6, 7, 8] }).path, ORDER_PATHS.time);
  assert.equal(plan({ types: [TYPE.NETWORK] }).path, ORDER_PATHS.type);
  assert.equal(plan({ timeInForces: [TIF.GFA] }).path, ORDER_PATHS.timeInForce);
  // A rare type beats a common status; a rare status beats a common type.
  assert.equal(plan({ types: [TYPE.NETWORK], statuses: [STATUS.FILLED] }).path, ORDER_PATHS.type);
  assert.equal(plan({ types: [TYPE.LIMIT], statuses: [STATUS.PARKED] }).path, ORDER_PATHS.status);

  const parties = plan({ partyIds: ['p1', 'p2'], statuses: [STATUS.FILLED], dateRange: { start: 1000n } });
  assert.equal(parties.path, ORDER_PATHS.party);
  assert.deepEqual(parties.branches, [['p1'], ['p2']]);
  assert.deepEqual(parties.residual, { statuses: [STATUS.FILLED] });
  assert.deepEqual(parties.dateRange, { start: 1000n });

  assert.equal(plan({ marketIds: ['m'] }).path, ORDER_PATHS.market);
  assert.equal(plan({ reference: 'r', partyIds: ['p'] }).path, ORDER_PATHS.reference);
  // The reference index leaves out empty references.
  assert.notEqual(plan({ reference: '' }).path, ORDER_PATHS.reference);

  const live = plan({ liveOnly: true });
  assert.equal(live.path, ORDER_PATHS.live);
  assert.deepEqual(live.residual, {}, 'the partial index guarantees liveness');
  assert.equal(plan({ liveOnly: true, partyIds: ['p'] }).path, ORDER_PATHS.liveParty);
  assert.equal(plan({ liveOnly: true, marketIds: ['m'] }).path, ORDER_PATHS.liveMarket);
  assert.deepEqual(plan({ liveOnly: true, partyIds: ['p'] }).residual, {});
  assert.deepEqual(plan({ partyIds: ['p'], liveOnly: true, statuses: [STATUS.PARKED] }).residual, { statuses: [STATUS.PARKED] });

  assert.equal(planOrderQuery({ statuses: [] }, stats), undefined);
});

test('planOrderQuery: more branches than MAX_BRANCHES fall back to another index', () => {
  const many = Array.from({ length: MAX_BRANCHES + 1 }, (_, i) => `p${i}`);
  const p = planOrderQuery({ partyIds: many }, stats)!;
  assert.equal(p.path, ORDER_PATHS.time);
  assert.deepEqual(p.residual, { partyIds: many });
  assert.equal(planOrderQuery({ partyIds: many.slice(0, MAX_BRANCHES) }, stats)!.path, ORDER_PATHS.party);
});

test('planOrderQuery: no plan binds more parameters than a statement takes, whatever lists it is given', () => {
  const ids = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  for (const filter of [
    { partyIds: ids(64, 'p'), marketIds: ids(1000, 'm') },
    { marketIds: ids(64, 'm'), partyIds: ids(1000, 'p'), statuses: [1, 2, 3] },
    { reference: 'r', partyIds: ids(1000, 'p'), marketIds: ids(1000, 'm') },
  ]) {
    const p = planOrderQuery(filter, stats)!;
    const residual = Object.values(p.residual).reduce<number>((n, v) => n + (Array.isArray(v) ? v.length : 1), 0);
    assert.ok(2 * p.branches.length * (residual + 8) <= MAX_PAGE_PARAMETERS, `${p.path.name}: ${p.branches.length} arms of ${residual} values`);
  }
  // Within the bound, the branches are kept.
  assert.equal(planOrderQuery({ partyIds: ids(64, 'p'), marketIds: ids(100, 'm') }, stats)!.branches.length, 64);
});

test('planBundleQuery: node id, then epoch, then submitter drive; the others are residual', () => {
  assert.deepEqual(planBundleQuery({}), { path: { name: 'time' }, residual: {} });
  const all = planBundleQuery({ nodeId: 'n', epochSeq: 3n, submitter: 's' });
  assert.equal(all.path.dimension, 'nodeId');
  assert.equal(all.value, 'n');
  assert.deepEqual(all.residual, { epochSeq: 3n, submitter: 's' });
  assert.equal(planBundleQuery({ epochSeq: 3n, submitter: 's' }).path.dimension, 'epochSeq');
  assert.equal(planBundleQuery({ submitter: 's' }).path.dimension, 'submitter');
});
