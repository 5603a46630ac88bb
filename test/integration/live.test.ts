/**
 * `ledger-query serve --source ...`: ingestion while serving, through the real
 * server process: a followed file that grows, a core pushing over the nanomsg
 * socket, NDJSON on stdin, and the status endpoint.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { busEventToJson } from '../../src/ingest/json-codec.js';
import { eventually as eventuallyWithin, startServe, type RunningServer } from '../support/cli.js';
import { blockEvents, eventFile, order } from '../support/events.js';
import { SpClient } from '../support/sp-client.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-live-'));
const servers: RunningServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

const block = (h: number) => blockEvents(BigInt(h), [
  { kind: 'order', order: order(h * 10 + 1) },
  { kind: 'order', order: order(h * 10 + 2) },
]);

async function serve(args: string[]): Promise<RunningServer> {
  const s = await startServe(args);
  servers.push(s);
  return s;
}

interface Status { state: string; lastBlock?: { height: string }; events: number; error?: string; listening?: { port: number } }

async function status(s: RunningServer): Promise<Status> {
  return (await fetch(`${s.url}/api/v2/ingest/status`)).json() as Promise<Status>;
}

async function orderCount(s: RunningServer): Promise<number> {
  const body = await (await fetch(`${s.url}/api/v2/orders?pagination.first=5000`)).json() as { orders: { edges: unknown[] } };
  return body.orders.edges.length;
}

/** Polls until `check` holds; the deadline only stops a test that would hang, so it is generous for a busy machine. */
const eventually = (what: string, check: () => Promise<boolean>) => eventuallyWithin(what, check, 30_000);

test('a followed file: new blocks appear, a half-written record is waited for, not misread', async () => {
  const file = join(dir, 'follow.events');
  const all = [1, 2, 3, 4, 5, 6].flatMap(block);
  const bytes = eventFile(all);
  const perBlock = all.length / 6;
  const cut = (n: number) => eventFile(all.slice(0, n)).length;
  writeFileSync(file, bytes.subarray(0, cut(3 * perBlock)));
  const s = await serve(['--data-dir', join(dir, 'follow'), '--source', `file://${file}`, '--follow']);
  await eventually('blocks 1-3', async () => (await orderCount(s)) === 6);

  appendFileSync(file, bytes.subarray(cut(3 * perBlock), cut(4 * perBlock)));
  await eventually('block 4', async () => (await orderCount(s)) === 8);

  // Block 5 and, in the same write, block 6 up to the middle of its second record's header: block 5
  // committed means the reader has read that write, and with it the half record, which it must wait for.
  const half = cut(5 * perBlock + 1) + 7;
  appendFileSync(file, bytes.subarray(cut(4 * perBlock), half));
  await eventually('block 5', async () => (await status(s)).lastBlock?.height === '5');
  let st = await status(s);
  assert.equal(st.state, 'running', JSON.stringify(st));
  assert.equal(await orderCount(s), 10);

  appendFileSync(file, bytes.subarray(half));
  await eventually('block 6', async () => (await orderCount(s)) === 12);
  st = await status(s);
  assert.equal(st.state, 'running', JSON.stringify(st));
  assert.equal(st.lastBlock?.height, '6');
  assert.equal(st.events, all.length);
});

test('a core pushing over the socket: each block shows; a peer cut off mid-block stores nothing of it; a reconnect resends without duplicates', async () => {
  const s = await serve(['--data-dir', join(dir, 'socket'), '--source', 'socket://127.0.0.1:0']);
  let port = 0;
  await eventually('socket listening', async () => {
    port = (await status(s)).listening?.port ?? 0;
    return port > 0;
  });
  const core = await SpClient.connect(port);
  for (const h of [1, 2, 3]) {
    await core.sendEvents(block(h));
    await eventually(`block ${h}`, async () => (await orderCount(s)) === h * 2);
  }
  // Block 4 cut off mid-message: once the source has dropped the peer, nothing of it may show.
  const four = block(4);
  await core.sendEvents(four.slice(0, 2));
  await core.sendHalfOf(four[2]!);
  await core.destroy();
  await s.outputLines(/disconnected mid-message after 14 whole messages.*the incomplete message is dropped/);
  assert.equal(await orderCount(s), 6);
  assert.equal((await status(s)).lastBlock?.height, '3');

  // The core reconnects and resends from the last committed block.
  const again = await SpClient.connect(port);
  await again.sendEvents([...block(3), ...block(4), ...block(5)]);
  await eventually('blocks 4-5', async () => (await orderCount(s)) === 10);
  const st = await status(s);
  assert.equal(st.lastBlock?.height, '5');
  await again.end();
});

test('NDJSON on stdin', async () => {
  const s = await serve(['--data-dir', join(dir, 'stdin'), '--source', '-']);
  const lines = [1, 2].flatMap(block).map((e) => JSON.stringify(busEventToJson(e))).join('\n') + '\n';
  s.child.stdin!.write(lines);
  await eventually('blocks from stdin', async () => (await orderCount(s)) === 4);
  s.child.stdin!.end();
  await eventually('ingestion finished', async () => (await status(s)).state === 'finished');
});

test('a corrupt record stops live ingestion with a clear status; the server keeps serving', async () => {
  const file = join(dir, 'corrupt.events');
  const bytes = Buffer.from(eventFile([1, 2].flatMap(block)));
  bytes.writeUInt32BE(0xffffff00, eventFile(block(1)).length); // size of block 2's first record
  writeFileSync(file, bytes);
  const s = await serve(['--data-dir', join(dir, 'corrupt'), '--source', `file://${file}`]);
  await eventually('failure reported', async () => (await status(s)).state === 'failed');
  const st = await status(s);
  assert.match(st.error ?? '', /corrupt\.events: byte offset \d+, outside any block: impossible record size/);
  assert.equal(st.lastBlock?.height, '1');
  assert.equal(await orderCount(s), 2);
});
