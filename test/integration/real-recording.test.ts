/**
 * The real network's own recording (../shared/fixtures/system_tests.evt.gz),
 * through every source a user has: the gzip file as it is, the event file, a
 * pipe, the same events as NDJSON on stdin, and a core pushing them over the
 * nanomsg socket. Each store must answer, through the real `serve`, what the
 * original data node answers for this file (docs/compatibility.md, section
 * 10), and all of them the same bytes, on either backend.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { Block } from '../../src/domain/block.js';
import { blockDigest } from '../../src/domain/block-digest.js';
import { BlockAssembler } from '../../src/ingest/assembler.js';
import { decodeBusEvent } from '../../src/ingest/codec.js';
import { RecordSplitter } from '../../src/ingest/framing.js';
import { busEventToJson } from '../../src/ingest/json-codec.js';
import { BACKENDS, EMBEDDED_SMALL_ID_LEVELS, type FreshStore } from '../support/backends.js';
import { CLI, eventually, runCli, startServe, type RunningServer } from '../support/cli.js';
import { historyRowOrder } from '../../src/store/history-row.js';
import { HISTORY_SQL, restoredMessage, type StoredHistoryRow } from '../support/history.js';
import { REAL, realRecording } from '../support/real-recording.js';
import { SpClient } from '../support/sp-client.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

const dir = mkdtempSync(join(tmpdir(), 'lq-real-'));
const stores: FreshStore[] = [];
after(async () => {
  for (const s of stores) await s.remove();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer { status: number; height: string | null; timestamp: string | null; body: string }
type OrderNode = Record<string, unknown> & { id: string; createdAt: string; marketId: string };
interface Edges { edges: { node: OrderNode; cursor: string }[]; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string } }

async function answer(server: RunningServer, path: string): Promise<Answer> {
  const res = await fetch(server.url + path);
  return { status: res.status, height: res.headers.get('x-block-height'), timestamp: res.headers.get('x-block-timestamp'), body: await res.text() };
}

const edges = (a: Answer, field = 'orders') => (JSON.parse(a.body) as Record<string, Edges>)[field]!;

/** The original's answers for the file, checked on one store; returns every answer's bytes to compare stores with. */
async function checkAnswers(server: RunningServer, what: string): Promise<string[]> {
  const all = await answer(server, `${ORDERS}?pagination.first=5000`);
  assert.equal(all.status, 200, `${what}: ${all.body}`);
  assert.equal(all.height, String(REAL.lastHeight), `${what}: X-Block-Height`);
  assert.equal(all.timestamp, REAL.lastBlockTimestamp, `${what}: X-Block-Timestamp`);
  const nodes = edges(all).edges.map((e) => e.node);
  assert.equal(nodes.length, REAL.orders, `${what}: every order once`);
  for (const n of nodes) {
    for (const time of ['createdAt', 'updatedAt', 'expiresAt']) {
      assert.equal(BigInt(n[time] as string) % 1000n, 0n, `${what}: ${n.id} ${time} ${String(n[time])} in whole microseconds`);
    }
    assert.ok('peggedOrder' in n && n.peggedOrder === null, `${what}: ${n.id} peggedOrder is null`);
    assert.ok(!('reason' in n) && !('icebergOrder' in n), `${what}: ${n.id} carries no reason or iceberg`);
    assert.match(n.id, /^[0-9a-f]{64}$/);
  }

  const market = await answer(server, `${ORDERS}?filter.marketIds=${REAL.market}`);
  assert.deepEqual(
    edges(market).edges.map(({ node }) => [node.id.slice(0, 8), node.createdAt]),
    REAL.marketNewestFirst.map(([id, t]) => [id, t]),
    `${what}: the orders of market ${REAL.market.slice(0, 8)} newest first, as the original lists them`,
  );
  assert.equal(market.height, String(REAL.lastHeight));

  const oldest = await answer(server, `${ORDERS}?pagination.first=5000&pagination.newestFirst=false`);
  assert.deepEqual(edges(oldest).edges.map((e) => e.node.id), nodes.map((n) => n.id).reverse(), `${what}: oldest first is the exact reverse`);

  // Backward in pages of 5 from the end visits the same rows in the same order.
  const backward: string[] = [];
  let before = '';
  for (let i = 0; i < 10; i++) {
    const page = edges(await answer(server, `${ORDERS}?pagination.last=5${before && `&pagination.before=${before}`}`));
    backward.unshift(...page.edges.map((e) => e.node.id));
    if (!page.pageInfo.hasPreviousPage) break;
    before = page.pageInfo.startCursor;
  }
  assert.deepEqual(backward, nodes.map((n) => n.id), `${what}: a backward walk`);

  const bundles = await answer(server, BUNDLES);
  assert.equal(bundles.status, 200);
  assert.equal(bundles.height, String(REAL.lastHeight));
  assert.deepEqual(edges(bundles, 'bundles').edges, [], 'the recording holds no signer-added events');

  const error = await answer(server, `${ORDERS}?pagination.first=0`);
  assert.equal(error.status, 400);
  assert.equal(error.height, String(REAL.lastHeight), `${what}: errors name the last block too`);

  const markets = [...new Set(nodes.map((n) => n.marketId))];
  assert.equal(markets.length, 3);
  const more = await Promise.all([
    ...markets.map((m) => answer(server, `${ORDERS}?filter.marketIds=${m}&pagination.newestFirst=false`)),
    answer(server, `${ORDERS}?filter.statuses=STATUS_ACTIVE&filter.liveOnly=true`),
    answer(server, `${ORDERS}?filter.excludeLiquidity=true&pagination.first=7`),
  ]);
  return [all, market, oldest, bundles, ...more].map((a) => `${a.status} ${a.height} ${a.timestamp} ${a.body}`);
}

/**
 * Serves the store `args` name, checks its answers, stops. One HTTP process:
 * the answers are the same bytes from any number (workers.test.ts), and two
 * cost each of these twenty serves over a second of CPU more on CI's two cores.
 */
async function served(args: string[], what: string): Promise<string[]> {
  const server = await startServe(['--workers', '1', ...args]);
  try {
    return await checkAnswers(server, what);
  } finally {
    await server.stop();
  }
}

/** What `ingest` must say of the file: every block stored, height 1 seen twice, the warning naming both hashes. */
function checkIngestOutput(r: { status: number | null; stdout: string; stderr: string }, what: string): void {
  assert.equal(r.status, 0, `${what}: ${r.stderr}`);
  assert.match(r.stdout, new RegExp(`${REAL.events} events, 1087 blocks stored, 1 already stored \\(1 with another hash\\), last block 1087`), what);
  assert.doesNotMatch(r.stdout, /incomplete/, what);
  const warning = r.stderr.split('\n').find((l) => l.includes('warning'));
  assert.ok(warning?.includes(REAL.firstHashes[0]) && warning.includes(REAL.firstHashes[1]), `${what}: ${r.stderr}`);
}

/** The framed records of the file: each one's BusEvent bytes, exactly as the core wrote them. */
function busEvents(file: Buffer): Buffer[] {
  const splitter = new RecordSplitter();
  splitter.push(file);
  const out: Buffer[] = [];
  for (let r = splitter.next(); r; r = splitter.next()) out.push(r.event);
  assert.equal(splitter.pending, 0);
  return out;
}

/** Per backend, the answers of its first store, to compare the backends. */
const byBackend = new Map<string, string[]>();

/**
 * Each height's digest, of the block a store keeps: the first block of that
 * height in the recording (height 1 comes twice).
 */
function expectedDigests(events: Buffer[]): [string, string][] {
  const assembler = new BlockAssembler();
  const digests = new Map<bigint, string>();
  for (const bytes of events) {
    const block: Block | undefined = assembler.push(decodeBusEvent(bytes));
    if (block && !digests.has(block.height)) digests.set(block.height, blockDigest(block));
  }
  return [...digests].sort(([a], [b]) => (a < b ? -1 : 1)).map(([h, d]) => [String(h), d]);
}

/** Every backend, and the embedded store with ids drained down its id levels. */
const STORES = [...BACKENDS, EMBEDDED_SMALL_ID_LEVELS];

for (const backend of STORES) test(`the real recording, through every source, answers as the original does: ${backend.name} store`, async (t) => {
  const gz = realRecording(t);
  if (gz === undefined) return;
  const raw = gunzipSync(readFileSync(gz));
  const evt = join(dir, 'system_tests.evt');
  writeFileSync(evt, raw);
  const events = busEvents(raw);
  assert.equal(events.length, REAL.events);
  const answers = new Map<string, string[]>();
  /** The store each source was ingested into, by source. */
  const bySource = new Map<string, FreshStore>();
  /** The options naming a new empty store of this backend. */
  const fresh = async (label: string) => {
    const store = await backend.fresh(dir, `${backend.name}-${label}`);
    stores.push(store);
    bySource.set(label, store);
    return store.args;
  };

  await t.test('the gzip file as it is', async () => {
    const d = await fresh('gzip');
    checkIngestOutput(runCli(['ingest', gz, ...d]), 'gzip');
    if (backend === EMBEDDED_SMALL_ID_LEVELS) {
      const [levels] = await bySource.get('gzip')!.select('SELECT (SELECT count(*) FROM order_ids_0) AS first, (SELECT count(*) FROM order_ids) AS ids');
      const { first, ids } = levels as { first: bigint; ids: bigint };
      assert.equal(ids, BigInt(REAL.orders), 'every order id in the levels');
      assert.ok(first < ids / 2n, `ids drained down the levels: ${first} of ${ids} in the first`);
    }
    answers.set('gzip', await served(d, 'gzip'));
  });

  await t.test('the event file', async () => {
    const d = await fresh('file');
    checkIngestOutput(runCli(['ingest', evt, ...d]), 'file');
    // Again: every block is already stored, and height 1's second hash is still told apart.
    const again = runCli(['ingest', evt, ...d]);
    assert.match(again.stdout, /0 blocks stored, 1088 already stored \(1 with another hash\), last block 1087/);
    answers.set('file', await served(d, 'file'));
  });

  await t.test('history gives back every Order message as the network sent it', async () => {
    const store = await backend.fresh(dir, `${backend.name}-history`);
    stores.push(store);
    checkIngestOutput(runCli(['ingest', evt, ...store.args]), 'history');
    const sent = new Set<string>();
    for (const bytes of events) {
      const event = decodeBusEvent(bytes);
      if (event.kind !== 'order') continue;
      assert.ok(event.encoded, 'a protobuf source keeps the Order message');
      sent.add(Buffer.from(event.encoded).toString('hex'));
    }
    const rows = (await store.select(`${HISTORY_SQL} ORDER BY h.height, h.seq`)) as unknown as StoredHistoryRow[];
    assert.ok(rows.length >= REAL.orders, `${rows.length} history rows`);
    for (const row of rows) {
      const message = restoredMessage(row);
      const what = `the row of ${row.id_bytes.toString('hex')} at ${row.height}/${row.seq}`;
      assert.ok(sent.has(message.toString('hex')), `${what} is a message the network sent`);
      // Every id of the real network is 64 lower-case hex characters: every row leaves them out.
      assert.equal(row.message.byteLength, message.byteLength - 3 * (2 + 64), `${what} leaves its three ids out`);
      assert.equal(String(row.version), String(historyRowOrder(row).version), `${what}: its version is its message's`);
    }

    // Each order's versions, and each (order, version)'s blocks, exactly as the events say: the
    // blocks the store keeps (height 1's first), each (order, version) at its last update in its block.
    const kept = new Map<bigint, Block>();
    const assembler = new BlockAssembler();
    for (const bytes of events) {
      const block = assembler.push(decodeBusEvent(bytes));
      if (block && !kept.has(block.height)) kept.set(block.height, block);
    }
    const said = new Map<string, string[]>();
    const lastUpdates: string[] = [];
    for (const block of kept.values()) {
      const last = new Map<string, number>();
      block.orders.forEach((o, i) => {
        const key = `${o.id} v${o.version}`;
        last.delete(key);
        last.set(key, i);
      });
      for (const [key, i] of last) {
        const [id, version] = key.split(' ');
        said.set(id!, [...new Set([...(said.get(id!) ?? []), version!])]);
        lastUpdates.push(`${block.height} ${key} ${Buffer.from(block.orderMessages[i]!).toString('hex')}`);
      }
    }
    const held = new Map<string, string[]>();
    for (const row of rows) {
      const id = row.id_bytes.toString('hex');
      held.set(id, [...new Set([...(held.get(id) ?? []), `v${row.version}`])]);
    }
    assert.equal(held.size, REAL.orders, 'every order has its history');
    assert.deepEqual(held, said, "each order's versions");
    assert.ok([...said.values()].some((versions) => versions.length > 1), 'some order of the recording was amended');
    assert.deepEqual(
      rows.map((r) => `${r.height} ${r.id_bytes.toString('hex')} v${r.version} ${restoredMessage(r).toString('hex')}`),
      lastUpdates,
      'every (order, version) in each block it changed in, at its last update, in the order of those updates',
    );
  });

  await t.test('a pipe: ingest <(gunzip -c system_tests.evt.gz)', async () => {
    const d = await fresh('pipe');
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" ingest <(gunzip -c "$0") "$1" "$2"`, gz, ...d], {
      encoding: 'utf8', timeout: 120_000,
    });
    checkIngestOutput(r, 'pipe');
    answers.set('pipe', await served(d, 'pipe'));
  });

  await t.test('the same events as NDJSON on stdin', async () => {
    const d = await fresh('ndjson');
    const ndjson = events.map((bytes) => JSON.stringify(busEventToJson(decodeBusEvent(bytes)))).join('\n');
    checkIngestOutput(runCli(['ingest', '-', ...d], ndjson), 'ndjson');
    answers.set('ndjson', await served(d, 'ndjson'));
  });

  await t.test('a core pushing the events over the nanomsg socket', async () => {
    const server = await startServe([...await fresh('socket'), '--source', 'socket://127.0.0.1:0']);
    try {
      const status = async () => (await fetch(`${server.url}/api/v2/ingest/status`)).json() as
        Promise<{ listening?: { port: number }; lastBlock?: { height: string }; blocksAlreadyStored: number; blocksWithOtherHash: number }>;
      let port: number | undefined;
      await eventually('the socket to listen', async () => (port = (await status()).listening?.port) !== undefined, 30_000);
      const core = await SpClient.connect(port!);
      for (const bytes of events) await core.send(bytes);
      let s = await status();
      await eventually('block 1087 stored', async () => (s = await status()).lastBlock?.height === '1087', 120_000);
      assert.equal(s.blocksAlreadyStored, 1);
      assert.equal(s.blocksWithOtherHash, 1, 'the status says height 1 came with another hash');
      assert.match(server.output(), new RegExp(`${REAL.firstHashes[1]}.*${REAL.firstHashes[0]}`), 'the warning is logged');
      answers.set('socket', await checkAnswers(server, 'socket'));
      await core.end();
    } finally {
      await server.stop();
    }
  });

  const [first, ...rest] = [...answers.entries()];
  assert.equal(answers.size, 5, 'every source was tried');
  for (const [source, got] of rest) assert.deepEqual(got, first![1], `${source} answers the same bytes as ${first![0]}`);
  byBackend.set(backend.name, first![1]);

  // Every source gives every block the digest of what its events say, whatever bytes they came in.
  const expected = expectedDigests(events);
  assert.equal(expected.length, Number(REAL.lastHeight));
  assert.equal(bySource.size, 5);
  for (const [source, store] of bySource) {
    const rows = await store.select('SELECT height, digest FROM blocks ORDER BY height');
    assert.deepEqual(rows.map((r) => [String(r.height), r.digest]), expected, `${source}: the stored digests`);
  }
});

test('the real recording: every backend answers the same bytes', (t) => {
  if (realRecording(t) === undefined) return;
  const [first, ...rest] = STORES.map((backend) => [backend.name, byBackend.get(backend.name)] as const);
  assert.ok(first![1], `${first![0]} answered`);
  for (const [name, answers] of rest) assert.deepEqual(answers, first![1], `${name} answers as ${first![0]}`);
});
