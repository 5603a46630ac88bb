import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Random, WeightedChoice, ZipfSampler } from '../../src/simulate/random.js';
import { InternalError } from '../../src/errors.js';

function draws(r: Random, n: number): number[] {
  return Array.from({ length: n }, () => r.uint32());
}

test('a seed gives the same sequence every time; other seeds and streams differ', () => {
  assert.deepEqual(draws(new Random(5), 100), draws(new Random(5), 100));
  assert.notDeepEqual(draws(new Random(5), 100), draws(new Random(6), 100));
  assert.notDeepEqual(draws(new Random(5, 1), 100), draws(new Random(5, 2), 100));
  assert.notDeepEqual(draws(new Random(5), 100), draws(new Random(5 + 2 ** 32), 100), 'high bits of the seed count');
  assert.notDeepEqual(draws(new Random(0), 100), draws(new Random(-1), 100));
});

test('samplers stay in range and look uniform', () => {
  const r = new Random(1);
  const buckets = new Array<number>(10).fill(0);
  for (let i = 0; i < 100_000; i++) {
    const f = r.float();
    assert.ok(f >= 0 && f < 1);
    buckets[Math.floor(f * 10)]!++;
    const k = r.between(3, 7);
    assert.ok(k >= 3 && k <= 7 && Number.isInteger(k));
  }
  for (const b of buckets) assert.ok(Math.abs(b - 10_000) < 600, `bucket ${b}`);
  assert.match(r.hex(64), /^[0-9a-f]{64}$/);
  assert.match(r.hex(40), /^[0-9a-f]{40}$/);
  assert.match(r.hex(5), /^[0-9a-f]{5}$/);
  assert.equal(r.bytes(65).length, 65);
  // Uniform over 64 bits: every draw in range, and both halves of the range met (each misses 1,000 draws with odds 2^-1000).
  const bigs = Array.from({ length: 1000 }, () => r.uint64());
  assert.ok(bigs.every((b) => b >= 0n && b < 2n ** 64n), 'every draw is a uint64');
  assert.ok(bigs.some((b) => b >= 2n ** 63n) && bigs.some((b) => b < 2n ** 63n), 'the high bit is drawn too');
});

test('the Zipf sampler favours low ranks heavily', () => {
  const r = new Random(2);
  const z = new ZipfSampler(1000, 1.1);
  const counts = new Array<number>(1000).fill(0);
  for (let i = 0; i < 100_000; i++) counts[z.sample(r)]!++;
  assert.ok(counts[0]! > 10_000, `top ${counts[0]}`);
  assert.ok(counts[0]! > 100 * counts[500]!, 'rank 1 far above rank 500');
  // Every draw a rank of the 1,000: a rank outside would have been counted past the end.
  assert.equal(counts.length, 1000);
  assert.equal(counts.reduce((a, b) => a + b, 0), 100_000);
  // Rank k + 1 is drawn in proportion to 1 / (k + 1)^1.1: rank 1 about 2^1.1 = 2.14 times as often as rank 2.
  const ratio = counts[0]! / counts[1]!;
  assert.ok(ratio > 2.0 && ratio < 2.3, `rank 1 / rank 2 = ${ratio}`);
});

test('weighted choice follows its weights and ignores zero weights', () => {
  const r = new Random(3);
  const w = new WeightedChoice<string>([['a', 3], ['b', 1], ['never', 0]]);
  let a = 0;
  for (let i = 0; i < 40_000; i++) {
    const v = w.sample(r);
    assert.notEqual(v, 'never');
    if (v === 'a') a++;
  }
  assert.ok(Math.abs(a - 30_000) < 800, `${a}`);
  assert.throws(() => new WeightedChoice([['x', 0]]), InternalError);
});
