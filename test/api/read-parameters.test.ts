import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bundleCursors, orderCursors } from '../../src/api/cursor.js';
import { ApiError } from '../../src/api/errors.js';
import {
  parseBoolean,
  readBundleFilter,
  readOrderFilter,
  readPagination,
  wantsPretty,
} from '../../src/api/read-parameters.js';
import { canonicalName, readQuery } from '../../src/api/query.js';
import { STATUS, TIF, TYPE } from '../../src/domain/enums.js';
import { hexId } from './fixtures.js';

const pagination = (qs: string) => readPagination(readQuery(`/x?${qs}`), orderCursors);
const orderFilter = (qs: string) => readOrderFilter(readQuery(`/x?${qs}`));
const bundleFilter = (qs: string) => readBundleFilter(readQuery(`/x?${qs}`));

/** Asserts a 400 whose message names the parameter and the value, with the given detail code. */
function assertRefused(fn: () => unknown, detailCode: number, ...mentions: string[]): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.grpcCode, 3);
    assert.equal(err.httpStatus, 400);
    assert.equal(err.details[0]?.code, detailCode);
    for (const m of mentions) assert.ok(err.message.includes(m), `${JSON.stringify(err.message)} should mention ${m}`);
    return true;
  });
}

test('snake_case segments are read as lowerCamel', () => {
  assert.equal(canonicalName('filter.party_ids'), 'filter.partyIds');
  assert.equal(canonicalName('pagination.newest_first'), 'pagination.newestFirst');
  assert.equal(canonicalName('filter.date_range.start_timestamp'), 'filter.dateRange.startTimestamp');
  assert.equal(canonicalName('filter.time_in_forces'), 'filter.timeInForces');
  assert.equal(canonicalName('node_id'), 'nodeId');
  assert.equal(canonicalName('epoch_seq'), 'epochSeq');
  assert.equal(canonicalName('filter.marketIds'), 'filter.marketIds');
});

test('readQuery keeps repeated keys in order under every spelling, and decodes values', () => {
  const q = readQuery('/p?filter.party_ids=a&filter.partyIds=b&x=%20y+z&pretty');
  assert.deepEqual(q.all('filter.partyIds'), [
    { key: 'filter.party_ids', value: 'a' },
    { key: 'filter.partyIds', value: 'b' },
  ]);
  assert.deepEqual(q.all('x'), [{ key: 'x', value: ' y z' }]);
  assert.equal(wantsPretty(q), true);
  assert.equal(wantsPretty(readQuery('/p')), false);
  assert.equal(wantsPretty(readQuery('/p?pretty=false')), true, 'any value asks for pretty');
});

test('a malformed %-escape is refused, naming the pair', () => {
  for (const url of ['/p?filter.reference=%zz', '/p?a=1&b=%4', '/p?x%=1']) {
    assert.throws(() => readQuery(url), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.httpStatus, 400);
      assert.match(err.message, /malformed query string/);
      return true;
    });
  }
  assert.throws(() => readQuery('/p?a=1&b=%4'), /"b=%4"/);
  assert.deepEqual(readQuery('/p?r=100%25').all('r'), [{ key: 'r', value: '100%' }]);
});

test('booleans follow Go strconv.ParseBool', () => {
  for (const t of ['true', 'TRUE', 'True', 't', 'T', '1']) assert.equal(parseBoolean(t), true, t);
  for (const f of ['false', 'FALSE', 'False', 'f', 'F', '0']) assert.equal(parseBoolean(f), false, f);
  for (const bad of ['', 'yes', 'tRuE', '2', ' true']) assert.equal(parseBoolean(bad), undefined, bad);
});

test('pagination defaults: newest first, forward, 1000 rows', () => {
  assert.deepEqual(pagination(''), { newestFirst: true, mode: 'first', limit: 1000 });
});

test('pagination modes, sizes and cursors', () => {
  const key = { createdAt: 77n, id: hexId('c', 1) };
  const cursor = orderCursors.encode(key);
  assert.deepEqual(pagination('pagination.first=5'), { newestFirst: true, mode: 'first', limit: 5 });
  assert.deepEqual(pagination('pagination.last=5000'), { newestFirst: true, mode: 'last', limit: 5000 });
  assert.deepEqual(pagination(`pagination.first=2&pagination.after=${cursor}`), {
    newestFirst: true, mode: 'first', limit: 2, cursor: key,
  });
  assert.deepEqual(pagination(`pagination.after=${cursor}`), { newestFirst: true, mode: 'first', limit: 1000, cursor: key });
  assert.deepEqual(pagination(`pagination.before=${cursor}`), { newestFirst: true, mode: 'last', limit: 1000, cursor: key });
  assert.deepEqual(pagination(`pagination.last=3&pagination.before=${cursor}&pagination.newest_first=false`), {
    newestFirst: false, mode: 'last', limit: 3, cursor: key,
  });
  assert.deepEqual(pagination('pagination.newestFirst=0'), { newestFirst: false, mode: 'first', limit: 1000 });
  assert.deepEqual(pagination('pagination.first=%2B7'), { newestFirst: true, mode: 'first', limit: 7 });
  assert.deepEqual(pagination('pagination.after='), { newestFirst: true, mode: 'first', limit: 1000 },
    'an empty cursor is no cursor');
});

test('pagination refusals name the parameter and value (code 10028)', () => {
  const cursor = orderCursors.encode({ createdAt: 1n, id: hexId('c', 1) });
  for (const bad of ['0', '5001', '-1', 'abc', '1.5', '1e3', '', ' 5', '99999999999999999999']) {
    assertRefused(() => pagination(`pagination.first=${encodeURIComponent(bad)}`), 10028, 'pagination.first', JSON.stringify(bad));
    assertRefused(() => pagination(`pagination.last=${encodeURIComponent(bad)}`), 10028, 'pagination.last', JSON.stringify(bad));
  }
  assertRefused(() => pagination('pagination.first=1&pagination.last=2'), 10028, 'pagination.first', 'pagination.last', '"1"', '"2"');
  assertRefused(() => pagination(`pagination.after=${cursor}&pagination.before=${cursor}`), 10028, 'pagination.after', 'pagination.before');
  assertRefused(() => pagination(`pagination.first=1&pagination.before=${cursor}`), 10028, 'pagination.first', 'pagination.before');
  assertRefused(() => pagination(`pagination.last=1&pagination.after=${cursor}`), 10028, 'pagination.last', 'pagination.after');
  assertRefused(() => pagination('pagination.newest_first=maybe'), 10028, 'pagination.newest_first', '"maybe"');
  assertRefused(() => pagination('pagination.first=1&pagination.first=2'), 10028, 'pagination.first');
  assertRefused(() => pagination('pagination.after=garbage'), 10028, 'pagination.after', '"garbage"');
  const bundleCursor = bundleCursors.encode({ timestamp: 1n, signatureId: hexId('c', 1) });
  assertRefused(() => pagination(`pagination.before=${bundleCursor}`), 10028, 'pagination.before', bundleCursor);
});

test('order filters: every name form reaches the filter', () => {
  const party = hexId('B', 1);
  assert.deepEqual(
    orderFilter(
      'filter.statuses=STATUS_ACTIVE&filter.statuses=8&filter.types=TYPE_LIMIT,2' +
        '&filter.time_in_forces=TIME_IN_FORCE_GTT&filter.excludeLiquidity=true' +
        `&filter.party_ids=${party}&filter.partyIds=network&filter.market_ids=${hexId('a', 2)}` +
        '&filter.reference=my-ref&filter.date_range.start_timestamp=-5&filter.dateRange.endTimestamp=10' +
        '&filter.live_only=t&unknown.param=whatever',
    ),
    {
      statuses: [STATUS.ACTIVE, STATUS.PARKED],
      types: [TYPE.LIMIT, TYPE.MARKET],
      timeInForces: [TIF.GTT],
      excludeLiquidity: true,
      partyIds: [party.toLowerCase(), 'network'],
      marketIds: [hexId('a', 2)],
      reference: 'my-ref',
      dateRange: { start: -5n, end: 10n },
      liveOnly: true,
    },
  );
  assert.deepEqual(orderFilter(''), {});
  assert.deepEqual(orderFilter('filter.excludeLiquidity=false&filter.liveOnly=0'), {}, 'false flags filter nothing');
  assert.deepEqual(orderFilter('filter.statuses=STATUS_ACTIVE,STATUS_ACTIVE&filter.statuses=1'), { statuses: [1] });
  assert.deepEqual(orderFilter('filter.reference='), { reference: '' });
  assert.deepEqual(orderFilter('filter.dateRange.startTimestamp=5'), { dateRange: { start: 5n } });
  assert.deepEqual(orderFilter('filter.dateRange.endTimestamp=5&filter.dateRange.startTimestamp=5'), { dateRange: { start: 5n, end: 5n } });
  assert.deepEqual(orderFilter('filter.statuses=0'), { statuses: [0] }, 'UNSPECIFIED is a valid value');
});

test('order filter refusals name the parameter and value (code 10029)', () => {
  assertRefused(() => orderFilter('filter.statuses=STATUS_BOGUS'), 10029, 'filter.statuses', '"STATUS_BOGUS"');
  assertRefused(() => orderFilter('filter.statuses=9'), 10029, 'filter.statuses', '"9"');
  assertRefused(() => orderFilter('filter.statuses=STATUS_ACTIVE,'), 10029, 'filter.statuses', '""');
  assertRefused(() => orderFilter('filter.statuses=status_active'), 10029, 'filter.statuses', '"status_active"');
  assertRefused(() => orderFilter('filter.types=TYPE_LIMITED'), 10029, 'filter.types', '"TYPE_LIMITED"');
  assertRefused(() => orderFilter('filter.time_in_forces=GTC'), 10029, 'filter.time_in_forces', '"GTC"');
  assertRefused(() => orderFilter('filter.partyIds=abc'), 10029, 'filter.partyIds', '"abc"');
  assertRefused(() => orderFilter(`filter.partyIds=${hexId('a', 1)}0`), 10029, 'filter.partyIds');
  assertRefused(() => orderFilter('filter.partyIds=NETWORK'), 10029, 'filter.partyIds', '"NETWORK"');
  assertRefused(() => orderFilter(`filter.marketIds=network`), 10029, 'filter.marketIds', '"network"');
  assertRefused(() => orderFilter(`filter.market_ids=${'g'.repeat(64)}`), 10029, 'filter.market_ids', 'g'.repeat(64));
  assertRefused(() => orderFilter('filter.excludeLiquidity=yes'), 10029, 'filter.excludeLiquidity', '"yes"');
  assertRefused(() => orderFilter('filter.liveOnly='), 10029, 'filter.liveOnly', '""');
  assertRefused(() => orderFilter('filter.dateRange.startTimestamp=1.5'), 10029, 'filter.dateRange.startTimestamp', '"1.5"');
  assertRefused(() => orderFilter('filter.dateRange.endTimestamp=9223372036854775808'), 10029, 'filter.dateRange.endTimestamp');
  assertRefused(
    () => orderFilter('filter.dateRange.startTimestamp=11&filter.date_range.end_timestamp=10'),
    10029, 'filter.dateRange.startTimestamp', 'filter.date_range.end_timestamp', '"11"', '"10"',
  );
  assertRefused(() => orderFilter('filter.reference=a&filter.reference=b'), 10029, 'filter.reference');
});

test('a very long bad value is echoed only in part', () => {
  const long = 'x'.repeat(10_000);
  assert.throws(() => orderFilter(`filter.partyIds=${long}`), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.ok(err.message.length < 400, `message length ${err.message.length}`);
    return true;
  });
});

test('bundle filters: names, case and empty values', () => {
  const node = hexId('E', 1);
  const submitter = `0x${'AbCd'.repeat(10)}`;
  assert.deepEqual(bundleFilter(`nodeId=${node}&submitter=${submitter}&epochSeq=42`), {
    nodeId: node.toLowerCase(),
    submitter: submitter.toLowerCase(),
    epochSeq: 42n,
  });
  assert.deepEqual(bundleFilter(`node_id=${node}&epoch_seq=18446744073709551615`), {
    nodeId: node.toLowerCase(),
    epochSeq: 18446744073709551615n,
  });
  assert.deepEqual(bundleFilter('nodeId=&submitter=&epochSeq='), {}, 'empty strings filter nothing, as in the original');
});

test('bundle filter refusals', () => {
  assertRefused(() => bundleFilter('nodeId=xyz'), 10029, 'nodeId', '"xyz"');
  assertRefused(() => bundleFilter('node_id=network'), 10029, 'node_id', '"network"');
  assertRefused(() => bundleFilter(`submitter=${'a'.repeat(40)}`), 10029, 'submitter', 'a'.repeat(40));
  assertRefused(() => bundleFilter(`submitter=0x${'a'.repeat(39)}`), 10029, 'submitter');
  for (const bad of ['abc', '-1', '1.0', '+1', '18446744073709551616']) {
    assertRefused(() => bundleFilter(`epochSeq=${encodeURIComponent(bad)}`), 10036, 'epochSeq', JSON.stringify(bad));
  }
  assertRefused(() => bundleFilter('epoch_seq=x'), 10036, 'epoch_seq', '"x"');
});
