/**
 * kill -9 of `ledger-query copy` at moments drawn at random (on the k-th
 * line it logs, the first as it starts loading rows, k drawn from a seeded
 * generator): the
 * target is refused as incomplete, on one line, by every command (serve,
 * serve --no-ingest, ingest, copy from it), the source is unchanged, and
 * the same copy run again succeeds. A kill that lands after the copy made
 * its target whole (it logs nothing between that and its exit) is no kill
 * of an unfinished copy: that target must be whole. Into the embedded store
 * and into PostgreSQL on the run's first server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { copyScratch, named } from '../support/copy-scratch.js';
import { BACKENDS, EMBEDDED, type FreshStore } from '../support/backends.js';
import { CLI, runCli } from '../support/cli.js';

const scratch = copyScratch('lq-copy-kill-');
const { dir } = scratch;
const KILLS = 10;

/** A small linear congruential generator: the moments are random, and the same each run. */
function generator(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}

/** Runs the copy and kills it with SIGKILL on the `k`-th line it logs (from 0); resolves with how it ended. */
function copyKilledAt(from: string, to: string, k: number): Promise<{ killed: boolean; code: number | null; lines: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'copy', '--from', from, '--to', to], { stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let killed = false;
    const kill = () => {
      killed = child.kill('SIGKILL');
    };
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      lines += d.split('\n').length - 1;
      if (!killed && lines > k) kill();
    });
    child.stdout.resume();
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ killed: signal === 'SIGKILL', code, lines }));
  });
}

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

for (const backend of [EMBEDDED, BACKENDS[1] ?? EMBEDDED]) {
  test(`kill -9 of a copy into ${backend.name}: refused as incomplete, source unchanged, the next copy succeeds`, async () => {
    const events = join(dir, 'net.events');
    const sourceArgs = ['--data-dir', join(dir, `source-${backend.name.replace(/\W/g, '-')}`)];
    const sim = runCli(['simulate', '--out', events, '--blocks', '300', '--orders-per-block', '30', '--seed', '11']);
    assert.equal(sim.status, 0, sim.stderr);
    assert.equal(runCli(['ingest', events, ...sourceArgs]).status, 0);
    const from = sourceArgs[1]!;
    const sourceFile = join(from, 'ledger.db');
    const before = sha(sourceFile);

    // A whole copy first: how many lines it logs, the range kills are drawn from.
    const first = await scratch.fresh(backend);
    const whole = await copyKilledAt(from, named(first), Number.MAX_SAFE_INTEGER);
    assert.equal(whole.code, 0);
    const random = generator(backend.name.length * 7919);
    const refusers = (target: FreshStore) => [
      ['serve', '--workers', '1', '--port', '0', ...target.args],
      ['serve', '--no-ingest', '--workers', '1', '--port', '0', ...target.args],
      ['ingest', events, ...target.args],
      ['copy', '--from', named(target), '--to', join(dir, 'never')],
    ];
    let kills = 0;
    for (let round = 0; kills < KILLS; round++) {
      assert.ok(round < 3 * KILLS, `only ${kills} of ${round} kills landed before the copy ended`);
      const target = await scratch.fresh(backend);
      const k = random(whole.lines);
      const end = await copyKilledAt(from, named(target), k);
      if (!end.killed) {
        assert.equal(end.code, 0, 'a copy not killed completes');
        continue;
      }
      const refuser = refusers(target)[kills % 4]!;
      const r = runCli(refuser, undefined, 30_000);
      if (r.status !== 66) {
        // The kill may land after the copy made its target whole (it logs nothing between that and its exit): then
        // the target must be whole, and the kill cut nothing short.
        const probe = runCli(['copy', '--from', named(target), '--to', join(dir, `probe-${round}`)]);
        assert.equal(probe.status, 0, `killed on line ${k}: ${refuser[0]} ${refuser[1]} exited ${r.status} (${r.stderr}), and the target is not whole: ${probe.stderr}`);
        assert.match(probe.stdout, /: block 300, .* checked/);
        continue;
      }
      kills++;
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /is an incomplete copy .*run the same ledger-query copy again/);
      assert.equal(sha(sourceFile), before, 'the source is unchanged');
      const again = runCli(['copy', '--from', from, '--to', named(target)]);
      assert.equal(again.status, 0, `killed on line ${k}, then: ${again.stderr}`);
      assert.match(again.stdout, /: block 300, .* checked/);
    }
  });
}
