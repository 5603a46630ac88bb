/**
 * --retention through the real command: bad values refused on one line,
 * exit 2, whichever way they come; the value printed by `config`; and a
 * writer killed with SIGKILL while it prunes, then started again, leaves
 * the store answering exactly as one that was never interrupted, on every
 * backend.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore } from '../../src/store/open.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { CLI, eventually, runCli } from '../support/cli.js';
import { assertAnswersAsModel } from '../support/compare-model.js';
import { replay } from '../support/model.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-retention-cli-'));
const stores: FreshStore[] = [];
after(async () => {
  await Promise.all(stores.map((s) => s.remove()));
  rmSync(dir, { recursive: true, force: true });
});

const file = join(dir, 'net.events');
const ready = writeEventFile(file, { seed: 21, blocks: 800, ordersPerBlock: 10 });

test('bad retention values are refused on one line with exit 2, from a flag, a variable or the config file', async () => {
  await ready;
  const store = ['--data-dir', join(dir, 'refused')];
  const config = join(dir, 'config.toml');
  for (const bad of ['0', '-1d', 'forever', '1x', '0s', '1.5h', '']) {
    const ways: [string, string[], NodeJS.ProcessEnv][] = [
      ['flag', ['ingest', file, ...store, `--retention=${bad}`], {}],
      ['variable', ['ingest', file, ...store], { LEDGER_QUERY_RETENTION: bad }],
      ['file', ['ingest', file, ...store, '--config', config], {}],
    ];
    writeFileSync(config, `retention = ${JSON.stringify(bad)}\n`);
    for (const [way, args, env] of ways) {
      // An empty variable counts as unset: ingest then runs as archive, which the loop below does not ask about.
      if (bad === '' && way === 'variable') continue;
      const r = runCliEnv(args, env);
      assert.equal(r.status, 2, `${way} ${JSON.stringify(bad)}: ${r.stderr}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line: ${r.stderr}`);
      assert.match(lines[0]!, /retention.*must be archive, standard \(30d\), lite \(1d\), or a duration of network time/i, way);
    }
  }
  const shown = runCli(['config', 'ingest', 'x', '--retention', 'standard']);
  assert.equal(shown.status, 0, shown.stderr);
  assert.match(shown.stdout, /^retention = "standard" +# --retention$/m);
  assert.match(runCli(['config', 'serve']).stdout, /^retention = "archive" +# default$/m);
});

function runCliEnv(args: string[], env: NodeJS.ProcessEnv): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: r.status, stderr: r.stderr };
}

for (const backend of BACKENDS) {
  test(`${backend.name}: a writer killed while it prunes, started again, answers as one never interrupted`, async () => {
    await ready;
    const blocks = await readBlocks(file);
    const [killed, whole] = [await backend.fresh(dir, 'killed'), await backend.fresh(dir, 'whole')];
    stores.push(killed, whole);
    for (const store of [killed, whole]) {
      const r = runCli(['ingest', file, ...store.args]);
      assert.equal(r.status, 0, r.stderr);
    }
    const uninterrupted = runCli(['ingest', file, ...whole.args, '--retention', '60s']);
    assert.equal(uninterrupted.status, 0, uninterrupted.stderr);
    const target = await whole.select('SELECT pruned_below, rows_pruned FROM retention');

    // The whole backlog is pruned in many batches: killed once one has committed.
    const child = spawn(process.execPath, [CLI, 'ingest', file, ...killed.args, '--retention', '60s'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const progress = async () => (await killed.select('SELECT pruned_below, rows_pruned FROM retention'))[0]!;
    await eventually('a prune batch committed', async () => BigInt(String((await progress()).rows_pruned)) > 0n, 60_000, 5);
    child.kill('SIGKILL');
    await exited;
    const atKill = await progress();
    assert.ok(BigInt(String(atKill.pruned_below)) < BigInt(String(target[0]!.pruned_below)),
      `killed part way: ${JSON.stringify(atKill, (_k, v: unknown) => String(v))} of ${JSON.stringify(target[0], (_k, v: unknown) => String(v))}`);

    const again = runCli(['ingest', file, ...killed.args, '--retention', '60s']);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(await progress(), target[0], 'pruned as far, the same rows');
    const [a, b] = [await openStore(killed.config, { readOnly: true }), await openStore(whole.config, { readOnly: true })];
    try {
      await assertAnswersAsModel(a, b, replay(blocks), 'killed, then started again', { everyNthOrder: 25 });
    } finally {
      await a.close();
      await b.close();
    }
  });
}
