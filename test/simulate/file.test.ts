import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BusEvent } from '../../src/ingest/events.js';
import { simulateEvents, type SimulateOptions } from '../../src/simulate/simulate.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { withoutMessage } from '../support/events.js';
import { chain, FIXTURE, tempDir } from './fixture.js';

/** Node signatures decode as Buffers; compare their bytes, not their class. */
function comparable(e: BusEvent): unknown {
  if (e.kind !== 'nodeSignature') return e;
  return { ...e, nodeSignature: { ...e.nodeSignature, sig: Buffer.from(e.nodeSignature.sig).toString('hex') } };
}

test('the same seed and options give a byte-identical file; another seed a different one', async () => {
  const opts: SimulateOptions = { seed: 42, blocks: 60, ordersPerBlock: 30 };
  const a = join(tempDir(), 'a.events');
  const b = join(tempDir(), 'b.events');
  const c = join(tempDir(), 'c.events');
  const summaryA = await writeEventFile(a, opts);
  const summaryB = await writeEventFile(b, opts);
  await writeEventFile(c, { ...opts, seed: 43 });
  const bytesA = readFileSync(a);
  assert.ok(bytesA.length > 100_000, 'a real file was written');
  assert.ok(bytesA.equals(readFileSync(b)), 'same seed, same bytes');
  assert.deepEqual(summaryA, summaryB);
  assert.ok(!bytesA.equals(readFileSync(c)), 'another seed, other bytes');
});

test('records are numbered 1, 2, 3, ... and decode to exactly the events the generator yields', async () => {
  const { records } = await chain();
  records.forEach((r, i) => assert.equal(r.seq, BigInt(i + 1)));
  const generated = [...simulateEvents(FIXTURE)];
  assert.equal(records.length, generated.length);
  for (let i = 0; i < generated.length; i++) {
    assert.deepStrictEqual(comparable(withoutMessage(records[i]!.event)), comparable(generated[i]!), `event ${i}`);
  }
});

test('the summary matches the file', async () => {
  const { summary, events, orders } = await chain();
  assert.equal(summary.events, events.length);
  assert.equal(summary.blocks, FIXTURE.blocks);
  assert.equal(events.filter((e) => e.kind === 'beginBlock').length, summary.blocks);
  assert.equal(summary.orders, orders.size);
  assert.equal(summary.orderEvents, events.filter((e) => e.kind === 'order').length);
  assert.equal(summary.bundles, events.filter((e) => e.kind === 'signerAdded').length);
  // The defaults: about 50 new orders per block.
  assert.ok(summary.orders > 40 * summary.blocks && summary.orders < 60 * summary.blocks, `${summary.orders} orders`);
});

test('the generator returns the same summary writeEventFile reports', async () => {
  const { summary } = await chain();
  const it = simulateEvents(FIXTURE);
  let r = it.next();
  while (r.done !== true) r = it.next();
  assert.deepEqual(r.value, summary);
});

test('options are honoured: chain id, start height, start time, block interval, order rate', () => {
  const events = [...simulateEvents({
    seed: 1, blocks: 5, ordersPerBlock: 4, chainId: 'testnet-x', startHeight: 1000n,
    startTime: 5_000_000_000n, blockIntervalNs: 250n,
  })];
  const begins = events.flatMap((e) => (e.kind === 'beginBlock' ? [e] : []));
  assert.deepEqual(begins.map((b) => b.height), [1000n, 1001n, 1002n, 1003n, 1004n]);
  assert.deepEqual(begins.map((b) => b.timestamp), [5_000_000_000n, 5_000_000_250n, 5_000_000_500n, 5_000_000_750n, 5_000_001_000n]);
  assert.ok(events.every((e) => e.chainId === 'testnet-x'));
  assert.equal(events[0]!.id, '1000-0');
  const orders = events.flatMap((e) => (e.kind === 'order' ? [e.order] : []));
  assert.ok(orders.length > 0 && orders.length < 60, `${orders.length} order events for ~20 orders`);
  // Even with a 250 ns interval, every order time stays inside its block.
  for (const o of orders) {
    assert.ok(o.createdAt >= 5_000_000_000n && o.createdAt < 5_000_001_250n);
  }
});

test('zero blocks is an empty stream, and bad options are refused', () => {
  assert.deepEqual([...simulateEvents({ seed: 1, blocks: 0 })], []);
  assert.throws(() => [...simulateEvents({ seed: 1, blocks: -1 })], RangeError);
  assert.throws(() => [...simulateEvents({ seed: 1.5, blocks: 1 })], RangeError);
  assert.throws(() => [...simulateEvents({ seed: 1, blocks: 1, blockIntervalNs: 0n })], RangeError);
  assert.throws(() => [...simulateEvents({ seed: 1, blocks: 1, startHeight: 0n })], RangeError);
});
