/**
 * A copy taken while a live ingest writes its source holds exactly one
 * block: the source is fed block after block on its stdin while the copy
 * runs (each block committed before the next is sent), and the copy then
 * answers every endpoint as a store that ingested the same events up to the
 * block the copy names, no more and no less. From the embedded store into
 * PostgreSQL, from PostgreSQL (the run's first server) into the embedded
 * store, and between embedded stores, where the target reads the source's
 * file itself (src/store/sqlite/copy-attached.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { BACKENDS, EMBEDDED, type Backend } from '../support/backends.js';
import { CLI, eventually, ingestStatus, runCli } from '../support/cli.js';
import { sameAnswers } from '../support/copy-answers.js';
import { copyScratch, named } from '../support/copy-scratch.js';
import { ndjson, recordingBlocks } from '../support/recording-blocks.js';

const scratch = copyScratch('lq-copy-live-');
const POSTGRES = BACKENDS[1] ?? EMBEDDED;

for (const [from, to] of [[EMBEDDED, POSTGRES], [POSTGRES, EMBEDDED], [EMBEDDED, EMBEDDED]] as [Backend, Backend][]) {
  test(`a copy from ${from.name} to ${to.name} while it ingests holds one block`, async () => {
    const file = join(scratch.dir, 'net.events');
    assert.equal(runCli(['simulate', '--out', file, '--blocks', '400', '--orders-per-block', '30', '--seed', '13']).status, 0);
    const blocks = recordingBlocks(file);
    const source = await scratch.fresh(from);
    const target = await scratch.fresh(to);
    const live = await scratch.serve(['--source', '-', ...source.args]);
    const height = async () => BigInt((await ingestStatus(live)).lastBlock?.height ?? '0');
    /** Sends the events of blocks[from, to) and waits until the last of them is committed. */
    const feed = async (first: number, last: number) => {
      live.child.stdin!.write(ndjson(blocks, blocks.ends[first - 1]?.events ?? 0, blocks.ends[last - 1]!.events));
      const want = blocks.ends[last - 1]!.height;
      await eventually(`block ${want} committed`, async () => (await height()) >= want, 60_000);
    };
    const half = Math.floor(blocks.ends.length / 2);
    await feed(0, half);

    const copy = spawn(process.execPath, [CLI, 'copy', '--from', named(source), '--to', named(target)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    copy.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    copy.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => copy.on('exit', resolve));
    let running = true;
    void exited.then(() => (running = false));
    let fed = half;
    let duringCopy = 0;
    while (running && fed < blocks.ends.length) {
      await feed(fed, fed + 1);
      fed++;
      duringCopy++;
    }
    assert.equal(await exited, 0, out);
    const held = /: block (\d+), /.exec(out);
    assert.ok(held, out);
    const block = BigInt(held[1]!);
    const index = blocks.ends.findIndex((e, i) => i > 0 && e.height === block);
    assert.ok(index >= half - 1, `the copy holds block ${block}, at least the last committed before it started`);
    assert.ok(duringCopy > 0, 'blocks were committed while the copy ran');

    // What the source answered at that block: a store given the same events up to it.
    const reference = await scratch.fresh(EMBEDDED);
    assert.equal(runCli(['ingest', '-', ...reference.args], ndjson(blocks, 0, blocks.ends[index]!.events)).status, 0);
    const [got, want] = [await scratch.serve(['--no-ingest', ...target.args]), await scratch.serve(['--no-ingest', ...reference.args])];
    await sameAnswers(got, want, `copy at block ${block}`);
    live.child.stdin!.end();
  });
}
