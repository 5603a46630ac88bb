import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BusEvent } from '../../src/ingest/events.js';
import { RECORD_HEADER_BYTES } from '../../src/ingest/framing.js';
import { busEventFromJson, busEventToJson } from '../../src/ingest/json-codec.js';
import { simulateEvents, type SimulateOptions } from '../../src/simulate/simulate.js';
import { writeEventFile, type CutKind, type WriteOptions } from '../../src/simulate/write.js';
import { withoutMessage } from '../support/events.js';
import { blocksOf, chain, FIXTURE, tempDir } from './fixture.js';
import { readEventFileTail } from './read-file.js';
import { UsageError } from '../../src/errors.js';

/** Node signatures decode as Buffers; compare their bytes, not their class. */
function comparable(e: BusEvent): unknown {
  if (e.kind !== 'nodeSignature') return e;
  return { ...e, nodeSignature: { ...e.nodeSignature, sig: Buffer.from(e.nodeSignature.sig).toString('hex') } };
}

/** A generated event as decoding gives it back: decoding leaves the transaction hash out. */
function decodedForm(e: BusEvent): BusEvent {
  const { txHash: _, ...rest } = e;
  return rest;
}

let files = 0;
async function written(opts: WriteOptions): Promise<{ path: string; bytes: Buffer; summary: Awaited<ReturnType<typeof writeEventFile>> }> {
  const path = join(tempDir(), `w${files++}.events`);
  const summary = await writeEventFile(path, opts);
  return { path, bytes: readFileSync(path), summary };
}

test('the same seed and options give a byte-identical file; another seed a different one', async () => {
  const opts: SimulateOptions = { seed: 42, blocks: 60, ordersPerBlock: 30 };
  const a = await written(opts);
  const b = await written(opts);
  const c = await written({ ...opts, seed: 43 });
  assert.ok(a.bytes.length > 100_000, 'a real file was written');
  assert.ok(a.bytes.equals(b.bytes), 'same seed, same bytes');
  assert.deepEqual(a.summary, b.summary);
  assert.ok(!a.bytes.equals(c.bytes), 'another seed, other bytes');
});

test('records are numbered 0, 1, 2, ... as the core numbers them, and decode to exactly the events the generator yields', async () => {
  const { records } = await chain();
  records.forEach((r, i) => assert.equal(r.seq, BigInt(i)));
  const generated = [...simulateEvents(FIXTURE)];
  assert.equal(records.length, generated.length);
  for (let i = 0; i < generated.length; i++) {
    const decoded = withoutMessage(records[i]!.event);
    assert.equal(decoded.txHash, undefined, 'decoding does not copy the transaction hash');
    assert.deepStrictEqual(comparable(decoded), comparable(decodedForm(generated[i]!)), `event ${i}`);
  }
});

test('the summary matches the file: blocks count both copies of height 1, heights each once', async () => {
  const { summary, events, orders } = await chain();
  assert.equal(summary.events, events.length);
  assert.equal(summary.blocks, FIXTURE.blocks + 1);
  assert.equal(summary.heights, FIXTURE.blocks);
  assert.equal(events.filter((e) => e.kind === 'beginBlock').length, summary.blocks);
  assert.equal(new Set(events.flatMap((e) => (e.kind === 'beginBlock' ? [e.height] : []))).size, summary.heights);
  assert.equal(summary.orders, orders.size);
  assert.equal(summary.orderEvents, events.filter((e) => e.kind === 'order').length);
  assert.equal(summary.bundles, events.filter((e) => e.kind === 'signerAdded').length);
  // The defaults: about 50 new orders per block.
  assert.ok(summary.orders > 40 * summary.heights && summary.orders < 60 * summary.heights, `${summary.orders} orders`);
  const plain = simulateEvents({ ...FIXTURE, repeatFirstHeight: false });
  let r = plain.next();
  while (r.done !== true) r = plain.next();
  assert.deepEqual(r.value, { ...summary, events: summary.events - 4, blocks: FIXTURE.blocks }, 'without the restart: 4 events and a block fewer');
});

test('the generator returns the same summary writeEventFile reports', async () => {
  const { summary } = await chain();
  const it = simulateEvents(FIXTURE);
  let r = it.next();
  while (r.done !== true) r = it.next();
  assert.deepEqual(r.value, summary);
});

/** A cut file against the uncut one of the same options. */
async function checkCut(opts: SimulateOptions, how: CutKind): Promise<{ partial: number; incompleteRecords: number }> {
  const whole = await written(opts);
  const cut = await written({ ...opts, cut: how });
  const info = cut.summary.cut;
  assert.ok(info !== undefined, 'a cut file reports where it ends');
  assert.equal(info.how, how);
  assert.equal(whole.summary.cut, undefined, 'an uncut file does not');
  const { cut: _, ...counts } = cut.summary;
  assert.deepEqual(counts, whole.summary, 'the counts describe the whole blocks');

  // Whole blocks: byte for byte the uncut file; then part of one more block.
  assert.ok(cut.bytes.length > whole.bytes.length);
  assert.ok(cut.bytes.subarray(0, whole.bytes.length).equals(whole.bytes), 'the whole blocks are the uncut file');
  assert.equal(info.fileBytes, cut.bytes.length);
  const lastHeight = (opts.startHeight ?? 1n) + BigInt(opts.blocks) - 1n;
  if (opts.blocks === 0) assert.equal(info.lastWholeBlock, undefined, 'no whole block');
  else assert.deepEqual(info.lastWholeBlock, { height: lastHeight, endOffset: whole.bytes.length });
  assert.equal(info.incompleteHeight, lastHeight + 1n);

  const { records, partial } = readEventFileTail(cut.path);
  const tail = records.filter((r) => r.offset >= whole.bytes.length);
  assert.equal(tail.length, info.incompleteRecords);
  assert.ok(tail.length >= 1);
  const first = tail[0]!.event;
  assert.ok(first.kind === 'beginBlock' && first.height === info.incompleteHeight, 'the incomplete block starts with its BeginBlock');
  assert.ok(tail.every((r) => r.event.kind !== 'endBlock' && r.event.id.startsWith(`${info.incompleteHeight}-`)), 'and has no EndBlock');
  records.forEach((r, i) => assert.equal(r.seq, BigInt(i), 'numbering goes on into the incomplete block'));
  if (how === 'boundary') assert.equal(partial, 0, 'ends on a record boundary');
  else assert.ok(partial > 0, 'ends inside a record');
  return { partial, incompleteRecords: tail.length };
}

test('a file cut on a record boundary inside a block: the whole blocks, then the incomplete block without its EndBlock', async () => {
  const seen = new Set<number>();
  for (const seed of [1, 2, 3, 4, 5, 6]) seen.add((await checkCut({ seed, blocks: 5, ordersPerBlock: 8 }, 'boundary')).incompleteRecords);
  assert.ok(seen.size > 1, 'the cut falls at different places');
});

test('a file cut inside a record: inside its header or inside its event, at different places', async () => {
  const partials: number[] = [];
  for (let seed = 1; seed <= 16; seed++) partials.push((await checkCut({ seed, blocks: 4, ordersPerBlock: 8 }, 'record')).partial);
  const inHeader = partials.filter((n) => n < RECORD_HEADER_BYTES).length;
  assert.ok(inHeader > 0 && inHeader < partials.length, `partial records of ${partials.join(', ')} bytes`);
  assert.ok(new Set(partials).size > 5);
});

test('a cut file of no whole block, and one with another start height and no restart', async () => {
  await checkCut({ seed: 9, blocks: 0 }, 'record');
  await checkCut({ seed: 9, blocks: 3, startHeight: 500n, repeatFirstHeight: false }, 'boundary');
});

test('simulated events keep their transaction hash through protobuf JSON (lowerCamel or snake_case)', () => {
  const events = [...simulateEvents({ seed: 4, blocks: 3, ordersPerBlock: 5 })];
  for (const e of events) {
    const json = busEventToJson(e);
    assert.equal(json.txHash, e.txHash);
    assert.deepEqual(Object.keys(json).slice(0, 5), ['id', 'block', 'type', 'chainId', 'txHash']);
    assert.equal(busEventFromJson(JSON.parse(JSON.stringify(json))).txHash, e.txHash);
    const { txHash, ...rest } = json;
    assert.equal(busEventFromJson({ ...rest, tx_hash: txHash }).txHash, e.txHash, 'tx_hash is read too');
    assert.equal(busEventFromJson(rest).txHash, undefined, 'absent stays absent');
  }
});

test('options are honoured: chain id, start height, start time, block interval, order rate', () => {
  const events = [...simulateEvents({
    seed: 1, blocks: 5, ordersPerBlock: 4, chainId: 'testnet-x', startHeight: 1000n,
    startTime: 5_000_000_000n, blockIntervalNs: 250n,
  })];
  const begins = events.flatMap((e) => (e.kind === 'beginBlock' ? [e] : []));
  assert.deepEqual(begins.map((b) => b.height), [1000n, 1000n, 1001n, 1002n, 1003n, 1004n]);
  // Nominal times 250 ns apart, each pushed up to a quarter interval later.
  begins.slice(1).forEach((b, i) => {
    const nominal = 5_000_000_000n + BigInt(i) * 250n;
    assert.ok(b.timestamp >= nominal && b.timestamp < nominal + 62n, `block ${b.height} at ${b.timestamp}`);
  });
  assert.ok(events.every((e) => e.chainId === 'testnet-x'));
  assert.equal(events[0]!.id, '1000-1');
  const orders = events.flatMap((e) => (e.kind === 'order' ? [e.order] : []));
  assert.ok(orders.length > 0 && orders.length < 60, `${orders.length} order events for ~20 orders`);
  // Even with a 250 ns interval, every order time stays inside its block.
  for (const block of blocksOf(events)) {
    const begin = block[0]!;
    assert.ok(begin.kind === 'beginBlock');
    const next = begins.find((b) => b.height === begin.height + 1n)?.timestamp ?? begin.timestamp + 500n;
    for (const e of block) {
      if (e.kind !== 'order' || e.order.version !== 1n || e.order.updatedAt !== 0n) continue;
      assert.ok(e.order.createdAt >= begin.timestamp && e.order.createdAt < next, `${e.id} created in its block`);
    }
  }
});

test('zero blocks is an empty stream, and bad options are refused', () => {
  assert.deepEqual([...simulateEvents({ seed: 1, blocks: 0 })], []);
  assert.throws(() => [...simulateEvents({ seed: 1, blocks: -1 })], UsageError);
  assert.throws(() => [...simulateEvents({ seed: 1.5, blocks: 1 })], UsageError);
  assert.throws(() => [...simulateEvents({ seed: 1, blocks: 1, blockIntervalNs: 0n })], UsageError);
  assert.throws(() => [...simulateEvents({ seed: 1, blocks: 1, startHeight: 0n })], UsageError);
});
