/**
 * `ledger-query ingest` of a simulated event file whose writer was cut off
 * inside a block, on a record boundary or inside a record, plain and gzipped
 * (a whole gzip of the cut file: its check passes, so the cut is the plain one):
 * every whole block is stored, one line names the incomplete block, exit 0;
 * once the rest of the file is written, ingesting it again completes it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { writeEventFile, type CutKind } from '../../src/simulate/write.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-cut-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function lastHeight(dataDir: string): Promise<bigint | undefined> {
  const store = openSqliteStore({ path: join(dataDir, 'ledger.db'), readOnly: true });
  try {
    return (await store.lastBlock())?.height;
  } finally {
    await store.close();
  }
}

for (const how of ['boundary', 'record'] as CutKind[]) {
  test(`a file cut inside a block (${how}): whole blocks stored, one line names the incomplete one, exit 0`, async () => {
    const opts = { seed: 5, blocks: 30, ordersPerBlock: 12 };
    const cutPath = join(dir, `cut-${how}.events`);
    const summary = await writeEventFile(cutPath, { ...opts, cut: how });
    const cut = summary.cut!;
    assert.ok(cut.lastWholeBlock, 'the file holds whole blocks before the cut');
    const gz = join(dir, `cut-${how}.events.gz`);
    writeFileSync(gz, gzipSync(readFileSync(cutPath)));

    for (const [file, unit] of [[cutPath, 'byte'], [gz, 'uncompressed byte']] as const) {
      const dataDir = join(dir, `store-${how}-${unit.replace(' ', '-')}`);
      const r = runCli(['ingest', file, '--data-dir', dataDir]);
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => /incomplete/.test(l));
      assert.equal(lines.length, 1, r.stdout);
      assert.match(lines[0]!, new RegExp(`ends inside block ${cut.incompleteHeight} \\(from ${unit} offset ${cut.lastWholeBlock!.endOffset}\\): that block is incomplete and was not stored`));
      assert.equal(await lastHeight(dataDir), cut.lastWholeBlock!.height, `${file}: every whole block and nothing more`);

      // The writer finishes the file: the incomplete block and the rest are stored, once.
      const whole = join(dir, `whole-${how}.events`);
      await writeEventFile(whole, { ...opts, blocks: 40 });
      const again = runCli(['ingest', whole, '--data-dir', dataDir]);
      assert.equal(again.status, 0, again.stderr);
      assert.doesNotMatch(again.stdout, /incomplete/);
      assert.equal(await lastHeight(dataDir), 40n);
    }
  });
}
