import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IngestStats } from '../../src/ingest/ingester.js';
import { ProgressReporter } from '../../src/ingest/progress.js';

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  const out = { isTTY, write: (s: string) => chunks.push(s) } as unknown as NodeJS.WriteStream;
  return { out, text: () => chunks.join('') };
}

const stats: IngestStats = {
  source: 'file:///x.events', events: 12_345, blocksCommitted: 67, blocksAlreadyStored: 0, blocksWithOtherHash: 0,
  blocksWithOtherContent: 0, eventsOutsideBlock: 0, skippedByType: {}, lastBlock: { height: 67n, time: 0n, chainId: 'c', hash: '' },
};

test('on a terminal: one redrawn line with a bar, percentage, rate and ETA', () => {
  const s = sink(true);
  const p = new ProgressReporter(s.out, 1000);
  p.update(stats, 250, true);
  p.end();
  assert.match(s.text(), /^\r\x1b\[K\[#{6}\.{18}\] 25%  12,345 events  67 blocks  [\d,]+ events\/s  height 67  ETA \d+ s\n$/);
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
