import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IngestStats } from '../../src/ingest/ingester.js';
import { duration, ProgressReporter } from '../../src/ingest/progress.js';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  const out = { isTTY, write: (s: string) => chunks.push(s) } as unknown as NodeJS.WriteStream;
  return { out, text: () => chunks.join('') };
}

const stats: IngestStats = {
  source: 'file:///x.events', events: 12_345, blocksCommitted: 67, blocksAlreadyStored: 0, blocksWithOtherHash: 0,
  blocksWithOtherContent: 0, eventsOutsideBlock: 0, skippedByType: {}, lastBlock: { height: 67n, time: 0n, chainId: 'c', hash: '' },
};

/** A clock the test moves. */
function clock() {
  let ms = 1_000_000;
  return { now: () => ms, advance: (by: number) => void (ms += by) };
}

test('on a terminal: one redrawn line with a bar, percentage, rate and, once the rate is known, the ETA', () => {
  const s = sink(true);
  const c = clock();
  const p = new ProgressReporter(s.out, 1000, { now: c.now });
  c.advance(1000);
  p.update(stats, 100, true);
  c.advance(4000);
  p.update(stats, 250, true);
  p.end();
  const lines = s.text().split('\r\x1b[K').filter(Boolean);
  assert.match(lines[0]!, /^\[#{2}\.{22}\] 10%  12,345 events  67 blocks  12,345 events\/s  height 67$/, 'no ETA on the first update');
  // 150 bytes in 4 s since the first update: 750 left take 20 s.
  assert.match(lines[1]!, /^\[#{6}\.{18}\] 25%  12,345 events  67 blocks  2,469 events\/s  height 67  ETA 20 s\n$/);
});

test('no ETA until the rate is known: never a figure from the first moments (the store opening, a gzip check)', () => {
  const s = sink(false);
  const c = clock();
  const total = 1_000_000_000;
  const p = new ProgressReporter(s.out, total, { now: c.now });
  // The first block is stored after a long start: 2 s to open the store, say, and 500 bytes read.
  c.advance(2000);
  p.update(stats, 500, true);
  c.advance(200);
  p.update(stats, 1000, true);
  c.advance(2000);
  p.update(stats, 400_000_000, true); // 40% but only 2.2 s since the first update
  c.advance(1000);
  p.update(stats, 500_000_000, true); // 3.2 s: 499,999,500 bytes since the first update, 500,000,000 left
  const lines = s.text().split('\n').filter(Boolean);
  assert.equal(lines.length, 4);
  for (const line of lines.slice(0, 3)) assert.doesNotMatch(line, /ETA/, line);
  assert.match(lines[3]!, /50%.*  ETA 3 s$/);
});

test('too little of the file since the first update: no ETA, however long it took', () => {
  const s = sink(false);
  const c = clock();
  const p = new ProgressReporter(s.out, 1_000_000, { now: c.now });
  p.update(stats, 0, true);
  c.advance(60_000);
  p.update(stats, 9_999, true); // under 1% in a minute: a rate from that would be a guess
  c.advance(60_000);
  p.update(stats, 20_000, true);
  const lines = s.text().split('\n').filter(Boolean);
  assert.doesNotMatch(lines[1]!, /ETA/);
  assert.match(lines[2]!, /ETA 1 h 38 min$/);
});

test('durations read as people say them', () => {
  assert.equal(duration(0.4), '0 s');
  assert.equal(duration(59), '59 s');
  assert.equal(duration(200), '3 min 20 s');
  assert.equal(duration(3600 * 2 + 5 * 60 + 10), '2 h 05 min');
});

test('not on a terminal: plain timestamped log lines, no control characters', () => {
  const s = sink(false);
  const p = new ProgressReporter(s.out, 1000);
  p.update(stats, 500, true);
  p.update(stats, 600); // throttled: within 5 s of the last line
  p.end();
  const lines = s.text().split('\n').filter(Boolean);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^\d{4}-\d\d-\d\dT[\d:.]+Z ingest file:\/\/\/x\.events: 50%  12,345 events  67 blocks/);
  assert.doesNotMatch(s.text(), /\x1b|\r/);
});
