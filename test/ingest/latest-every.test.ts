/**
 * The ingest thread's progress reports (src/ingest/latest-every.ts): at most
 * one per interval, the last of a burst always sent, and nothing after
 * stop(). A timer left pending when a report went out at once used to send
 * a stale report after the thread's 'done', and `serve --source` then said
 * its ingest thread had vanished (1 run in 12 on a 100-block file).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatestEvery } from '../../src/ingest/latest-every.js';

function clocked() {
  let now = 1_000;
  const sent: number[] = [];
  return { sent, now: () => now, advance: (ms: number) => (now += ms) };
}

test('at most one report per interval, and the last of a burst once the interval has passed', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const c = clocked();
  const every = new LatestEvery<number>(100, (v) => c.sent.push(v), c.now);
  every.offer(1);
  every.offer(2);
  every.offer(3);
  assert.deepEqual(c.sent, [1], 'the first at once, the rest wait');
  c.advance(100);
  t.mock.timers.tick(100);
  assert.deepEqual(c.sent, [1, 3], 'the latest of those that waited');
  t.mock.timers.tick(1_000);
  assert.deepEqual(c.sent, [1, 3], 'nothing twice');
});

test('nothing is sent after stop(), even where a report went out at once while another waited', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const c = clocked();
  const every = new LatestEvery<number>(100, (v) => c.sent.push(v), c.now);
  every.offer(1); // sent at once
  every.offer(2); // waits for its timer
  // The timer is late (a busy thread): by the next offer the interval has passed, and it goes out at once.
  c.advance(150);
  every.offer(3);
  assert.deepEqual(c.sent, [1, 3]);
  every.stop();
  t.mock.timers.tick(1_000);
  assert.deepEqual(c.sent, [1, 3], 'the timer set for 2 sends nothing after stop()');
});
