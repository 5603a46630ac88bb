import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BlockClock, BlockTimes } from '../../src/simulate/clock.js';
import { Random } from '../../src/simulate/random.js';

const START = 1_704_067_200_000_000_000n;
const SECOND = 1_000_000_000n;

test('block times: nominal time plus less than a quarter interval, strictly growing, with nanosecond digits', () => {
  const times = new BlockTimes(START, SECOND);
  const all = Array.from({ length: 2000 }, (_, i) => times.at(i));
  all.forEach((t, i) => {
    const nominal = START + BigInt(i) * SECOND;
    assert.ok(t >= nominal && t < nominal + SECOND / 4n, `block ${i}`);
    if (i > 0) assert.ok(t > all[i - 1]!);
  });
  assert.ok(all.filter((t) => t % 1000n === 0n).length < 10, 'hardly any on a whole microsecond');
  assert.equal(new BlockTimes(START, SECOND).at(17), all[17], 'a pure function of the index');
  // Tiny intervals still grow.
  const tiny = new BlockTimes(0n, 1n);
  assert.deepEqual([0, 1, 2].map((i) => tiny.at(i)), [0n, 1n, 2n]);
});

test('the clock stays inside its block and never goes back', () => {
  const rng = new Random(1);
  const clock = new BlockClock(rng, 1000n, 50);
  const times = new BlockTimes(5_000_000_123n, 1000n);
  for (let b = 0; b < 50; b++) {
    const [start, next] = [times.at(b), times.at(b + 1)];
    clock.startBlock(start, next);
    let previous = start;
    for (let i = 0; i < 200; i++) {
      const t = i % 3 === 0 ? clock.tickSameMicro() : clock.tick();
      assert.ok(t >= previous && t < next, `block ${b}, tick ${i}: ${t} in [${start}, ${next})`);
      previous = t;
    }
  }
});

test('a same-microsecond tick is later, in the same microsecond, when that microsecond has room', () => {
  const rng = new Random(2);
  const clock = new BlockClock(rng, SECOND, 50);
  let same = 0;
  for (let b = 0; b < 200; b++) {
    const start = START + BigInt(b) * SECOND + BigInt(rng.int(1000));
    clock.startBlock(start, start + SECOND);
    const t = clock.tick();
    const ticks = clock.ticks;
    const u = clock.tickSameMicro();
    assert.equal(clock.ticks, ticks + 1, 'counts as a tick');
    assert.ok(u > t);
    if (t % 1000n !== 999n) {
      assert.equal(u / 1000n, t / 1000n, `${t} and ${u} share a microsecond`);
      same++;
    }
  }
  assert.ok(same > 190);
});
