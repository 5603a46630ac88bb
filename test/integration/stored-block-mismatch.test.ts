/**
 * A store holding other content than a good file says so when that file is
 * read again: `ledger-query ingest` of blocks with the stored heights and
 * hashes but other events names their heights, exits 65 and writes nothing;
 * the file the store was built from reads again without a word. On every
 * backend.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Block } from '../../src/domain/block.js';
import { blockDigest } from '../../src/domain/block-digest.js';
import { BlockAssembler } from '../../src/ingest/assembler.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { runCli } from '../support/cli.js';
import { blockEvents, eventFile, order } from '../support/events.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-mismatch-'));
const stores: FreshStore[] = [];
after(async () => {
  for (const s of stores) await s.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** Blocks 1..last, three orders each; in the blocks of `altered`, one order's price has a digit changed. */
function events(last: number, altered: readonly number[] = []): BusEvent[] {
  const all: BusEvent[] = [];
  for (let h = 1; h <= last; h++) {
    const orders = [0, 1, 2].map((i) => order(10 * h + i, { price: `12${h}${i}` }));
    if (altered.includes(h)) orders[1] = { ...orders[1]!, price: `13${h}1` };
    all.push(...blockEvents(BigInt(h), orders.map((o) => ({ kind: 'order' as const, order: o }))));
  }
  return all;
}

function write(name: string, evs: BusEvent[]): string {
  const path = join(dir, name);
  writeFileSync(path, eventFile(evs));
  return path;
}

/** Every row the store holds of its blocks and orders, to tell that nothing changed. */
async function contents(store: FreshStore): Promise<unknown[]> {
  return Promise.all([
    'SELECT * FROM blocks ORDER BY height', 'SELECT * FROM last_block', 'SELECT * FROM orders_current ORDER BY id_bytes',
    'SELECT * FROM orders_history ORDER BY height, seq',
  ].map((sql) => store.select(sql)));
}

const good = write('good.events', events(8));
// The scenario that asked for this: a corrupt copy, ingested up to a block before its end.
const corruptEvents = events(6, [2, 3, 4, 6]);
const corrupt = write('corrupt.events', corruptEvents);

for (const backend of BACKENDS) {
  test(`a file read again with other content than the store holds is named, exit 65, nothing written: ${backend.name} store`, async () => {
    const store = await backend.fresh(dir, `${backend.name}-mismatch`);
    stores.push(store);
    const first = runCli(['ingest', corrupt, ...store.args]);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /6 blocks stored, 0 already stored, last block 6/);

    // Each stored block keeps the digest of what its events say.
    const assembler = new BlockAssembler();
    const blocks = corruptEvents.map((e) => assembler.push(e)).filter((b): b is Block => b !== undefined);
    const stored = await store.select('SELECT height, digest FROM blocks ORDER BY height');
    assert.deepEqual(stored.map((r) => [String(r.height), r.digest]), blocks.map((b) => [String(b.height), blockDigest(b)]));
    const before = await contents(store);

    const again = runCli(['ingest', good, ...store.args]);
    assert.equal(again.status, 65, again.stderr);
    assert.equal(again.stdout, '', 'no summary: ingestion did not succeed');
    const lines = again.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, again.stderr);
    assert.match(
      lines[0]!,
      /^ledger-query ingest: blocks 2\.\.4, 6 are stored with other content than file:\/\/\/.*\/good\.events holds \(the same heights and hashes, other events\); nothing more was written\. A store is not repaired in place: rebuild it from a good source into a new one \(README: "Rebuilding a store"\)$/,
    );
    assert.deepEqual(await contents(store), before, 'blocks 7 and 8 not written, the stored blocks unchanged');

    // The file the store was built from holds what it holds: no mismatch.
    const same = runCli(['ingest', corrupt, ...store.args]);
    assert.equal(same.status, 0, same.stderr);
    assert.equal(same.stderr, '');
    assert.match(same.stdout, /0 blocks stored, 6 already stored, last block 6/);
    assert.deepEqual(await contents(store), before);

    // Rebuilt from the good file, as the README says: a new store, which then reads the good file again quietly.
    const rebuilt = await backend.fresh(dir, `${backend.name}-rebuilt`);
    stores.push(rebuilt);
    assert.equal(runCli(['ingest', good, ...rebuilt.args]).status, 0);
    const quiet = runCli(['ingest', good, ...rebuilt.args]);
    assert.equal(quiet.status, 0, quiet.stderr);
    assert.match(quiet.stdout, /0 blocks stored, 8 already stored, last block 8/);
  });
}
