/**
 * Only verified bytes are stored, and input that holds nothing is no success,
 * through the real `ledger-query ingest` and `serve --source`: a gzip member
 * that fails its CRC-32 stores nothing of itself (the network's own recording
 * with one digit of a price changed), a gzip file cut short stores nothing of
 * its last member unless --accept-unverified, an empty or cut input exits 1,
 * and a directory is a usage error naming it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { decodeBusEvent } from '../../src/ingest/codec.js';
import { RecordSplitter } from '../../src/ingest/framing.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { eventually, ingestStatus, runCli, startServe, type RunningServer } from '../support/cli.js';
import { REAL, realRecording } from '../support/real-recording.js';

const dir = mkdtempSync(join(tmpdir(), 'lq-verified-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let stores = 0;
const freshDataDir = () => join(dir, `store-${++stores}`);

async function lastHeight(dataDir: string): Promise<bigint | undefined> {
  const store = openSqliteStore({ path: join(dataDir, 'ledger.db'), readOnly: true });
  try {
    return (await store.lastBlock())?.height;
  } finally {
    await store.close();
  }
}

/** The lines of a command's stderr. */
const lines = (text: string) => text.split('\n').filter((l) => l !== '');

interface OrderNode { id: string; price: string }

async function orders(server: RunningServer): Promise<OrderNode[]> {
  const res = await fetch(`${server.url}/api/v2/orders?pagination.first=5000`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { orders: { edges: { node: OrderNode }[] } }).orders.edges.map((e) => e.node);
}

/** Serves `dataDir` read-only for `use`. */
async function serving<T>(dataDir: string, use: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await startServe(['--data-dir', dataDir, '--no-ingest', '--workers', '1']);
  try {
    return await use(server);
  } finally {
    await server.stop();
  }
}

/** `serve --source` of `args`, until its ingestion has finished or failed: the status and the orders served. */
async function serveSource(args: string[]): Promise<{ state?: string; error?: string; height?: string; orders: OrderNode[] }> {
  const server = await startServe(['--data-dir', freshDataDir(), '--workers', '1', ...args]);
  try {
    await eventually('ingestion to end', async () => ['finished', 'failed'].includes((await ingestStatus(server)).state ?? ''), 30_000);
    const status = await ingestStatus(server);
    return { state: status.state, error: status.error, height: status.lastBlock?.height, orders: await orders(server) };
  } finally {
    await server.stop();
  }
}

/**
 * The last state of an order, and where in `gz` (a level-0 gzip of `raw`,
 * whose data lie in it as they are) the first digit of its price is: found by
 * the bytes around the price in that event, which stand once in `gz`.
 */
function lonePrice(raw: Buffer, gz: Buffer): { id: string; price: string; at: number } {
  const splitter = new RecordSplitter();
  splitter.push(raw);
  const last = new Map<string, { price: string; event: Buffer }>();
  for (let rec = splitter.next(); rec; rec = splitter.next()) {
    const event = decodeBusEvent(rec.event);
    if (event.kind === 'order') last.set(event.order.id, { price: event.order.price, event: rec.event });
  }
  for (const [id, { price, event }] of last) {
    const inEvent = event.indexOf(price);
    if (price.length < 6 || inEvent < 8 || event.indexOf(price, inEvent + 1) >= 0) continue;
    const around = event.subarray(inEvent - 8, inEvent + price.length + 8);
    const at = gz.indexOf(around);
    if (at >= 0 && gz.indexOf(around, at + 1) < 0) return { id, price, at: at + 8 };
  }
  assert.fail('no order of the recording has a price found by the bytes around it');
}

test('the network\'s recording with one digit of a price changed inside its gzip: nothing stored, exit 1 naming the member; the good file then stores every height and the original price', async (t) => {
  const path = realRecording(t);
  if (!path) return;
  const raw = gunzipSync(readFileSync(path));
  const gz = gzipSync(raw, { level: 0 });
  const target = lonePrice(raw, gz);
  const digit = gz[target.at]!;
  gz[target.at] = digit === 0x31 ? 0x32 : 0x31;
  const bad = join(dir, 'altered.evt.gz');
  writeFileSync(bad, gz);

  const dataDir = freshDataDir();
  const r = runCli(['ingest', bad, '--data-dir', dataDir]);
  assert.equal(r.status, 1, r.stderr);
  assert.deepEqual(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(
    `^ledger-query ingest: ingestion stopped: file://${bad}: uncompressed byte offset 0, outside any block: ` +
      'gzip member 1 \\(from compressed byte offset 0\\) fails its check: the CRC-32 of its data is 0x[0-9a-f]{8}, ' +
      'its trailer says 0x[0-9a-f]{8}; nothing of it is stored\n$',
  ));
  assert.equal(await lastHeight(dataDir), undefined, 'no block of the member that failed');

  // Through serve --source as well: the ingestion fails, and nothing is served.
  const served = await serveSource(['--source', `file://${bad}`]);
  assert.equal(served.state, 'failed');
  assert.match(served.error ?? '', /gzip member 1 \(from compressed byte offset 0\) fails its check/);
  assert.deepEqual(served.orders, []);

  const good = runCli(['ingest', path, '--data-dir', dataDir]);
  assert.equal(good.status, 0, good.stderr);
  assert.equal(await lastHeight(dataDir), REAL.lastHeight);
  await serving(dataDir, async (server) => {
    const order = (await orders(server)).find((o) => o.id === target.id);
    assert.equal(order?.price, target.price, `order ${target.id.slice(0, 8)} at its original price`);
  });
});

test('empty input and input without a whole event exit 1 on one line, storing nothing', async () => {
  const empty = join(dir, 'empty.events');
  writeFileSync(empty, '');
  const partial = join(dir, 'partial.events');
  writeFileSync(partial, Buffer.from([0, 0, 0, 40, 0, 0, 0]));
  const emptyNdjson = join(dir, 'empty.ndjson');
  writeFileSync(emptyNdjson, '\n\n');
  for (const [file, shown, why] of [
    [empty, `file://${empty}: byte offset 0`, 'it holds no event: it is empty'],
    [partial, `file://${partial}: byte offset 0`, 'it holds no whole event: it ends inside its first record'],
    [`ndjson://${emptyNdjson}`, `ndjson:file://${emptyNdjson}: byte offset 0`, 'it holds no event: it is empty'],
  ] as const) {
    const dataDir = freshDataDir();
    const r = runCli(['ingest', file, '--data-dir', dataDir]);
    assert.equal(r.status, 1, `${file}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, `ledger-query ingest: ingestion stopped: ${shown}, outside any block: ${why}\n`);
    assert.equal(await lastHeight(dataDir), undefined);
  }
});

test('a gzip file cut short: nothing of its last member, exit 1 saying it is cut; --accept-unverified stores its whole blocks and names the incomplete one', async () => {
  const plain = join(dir, 'net.events');
  await writeEventFile(plain, { seed: 3, blocks: 60, ordersPerBlock: 10 });
  const whole = gzipSync(readFileSync(plain));

  // 20 bytes: the header and the first bytes of data; not one whole event, with or without the flag.
  const twenty = join(dir, 'twenty.events.gz');
  writeFileSync(twenty, whole.subarray(0, 20));
  const r20 = runCli(['ingest', twenty, '--data-dir', freshDataDir()]);
  assert.equal(r20.status, 1, r20.stderr);
  assert.equal(lines(r20.stderr).length, 1, r20.stderr);
  assert.match(r20.stderr, /: uncompressed byte offset 0, outside any block: gzip member 1 \(from compressed byte offset 0\) is cut short: the stream ends in its compressed data, 20 bytes into the member, before its CRC-32 and length; nothing of it is stored \(--accept-unverified stores its whole blocks unverified\)\n$/);
  const a20 = runCli(['ingest', twenty, '--data-dir', freshDataDir(), '--accept-unverified']);
  assert.equal(a20.status, 1, a20.stderr);
  assert.match(a20.stderr, /^ledger-query ingest: ingestion stopped: file:\/\/.*: uncompressed byte offset 0, outside any block: it holds no (whole )?event/);
  assert.equal(lines(a20.stderr).length, 1, a20.stderr);

  const cut = join(dir, 'cut.events.gz');
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.7)));
  const refused = freshDataDir();
  const r = runCli(['ingest', cut, '--data-dir', refused]);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /^ledger-query ingest: ingestion stopped: file:\/\/.*: uncompressed byte offset 0, outside any block: gzip member 1 .* is cut short/);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.equal(await lastHeight(refused), undefined, 'no unverified block');

  const accepted = freshDataDir();
  const a = runCli(['ingest', cut, '--data-dir', accepted, '--accept-unverified']);
  assert.equal(a.status, 0, a.stderr);
  const height = await lastHeight(accepted);
  assert.ok(height !== undefined && height > 10n, `stored up to ${height}`);
  assert.match(a.stdout, new RegExp(`ends inside block ${height + 1n} \\(from uncompressed byte offset \\d+\\): that block is incomplete and was not stored`));

  // serve --source: the same, failed without the flag, stored with it.
  const servedRefused = await serveSource(['--source', `file://${cut}`]);
  assert.equal(servedRefused.state, 'failed');
  assert.match(servedRefused.error ?? '', /gzip member 1 .* is cut short/);
  assert.deepEqual(servedRefused.orders, []);
  const servedAccepted = await serveSource(['--source', `file://${cut}`, '--accept-unverified']);
  assert.equal(servedAccepted.state, 'finished');
  assert.equal(servedAccepted.height, String(height));
});

test('a directory given as an event file: one line naming it, exit 2', () => {
  const folder = join(dir, 'a-folder');
  mkdirSync(folder);
  for (const arg of [folder, `file://${folder}`]) {
    const r = runCli(['ingest', arg, '--data-dir', freshDataDir()], undefined, 30_000);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(lines(r.stderr)[0], `ledger-query ingest: not a file: ${folder} is a directory`);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  const flag = runCli(['serve', '--source', 'socket://127.0.0.1:0', '--accept-unverified'], undefined, 30_000);
  assert.equal(flag.status, 2, flag.stderr);
  assert.equal(lines(flag.stderr)[0], 'ledger-query serve: --accept-unverified goes with a --source file://PATH');
});
