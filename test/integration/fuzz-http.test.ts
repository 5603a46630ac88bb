/**
 * HTTP fuzzing of every endpoint (test/support/http-fuzz.ts lists them) on
 * every backend: random requests through real HTTP to the real server
 * (buildApp, so page requests meet the fast path before Fastify) over a
 * store filled from a simulated network. No answer may be a server error,
 * every refusal is the error envelope as JSON, a page endpoint's answers
 * name the last block, and the store is byte for byte (the embedded store's
 * file) and row for row what it was. Then every combination of the
 * pagination parameters, each answered as the rules of src/api/read-parameters.ts say.
 *
 * 10,000 requests on the embedded store and 10,000 on PostgreSQL, shared out
 * among its test servers. A raw non-ASCII byte in the target never reaches
 * the server's code (Node's parser refuses it): here such a request must be
 * a 400; the envelope of that answer is fuzz-http-raw.test.ts's to check.
 *
 * FUZZ_SEED reproduces a run; FUZZ_SCALE scales the request count.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { buildApp } from '../../src/api/app.js';
import { fileSource } from '../../src/ingest/file-source.js';
import { ingest } from '../../src/ingest/ingester.js';
import { writeEventFile } from '../../src/simulate/write.js';
import { openStore, openWriter } from '../../src/store/open.js';
import { BACKENDS, type FreshStore } from '../support/backends.js';
import { readBlocks } from '../support/blocks.js';
import { fuzzRuns, fuzzSeed, Tally } from '../support/fuzz.js';
import {
  anyRequestArb, checkAnswer, ENDPOINTS, PAGINATION, parserRefuses, shown, type FuzzAnswer, type FuzzRequest, type Pools,
} from '../support/http-fuzz.js';

/**
 * Random requests on the embedded store, and on PostgreSQL, shared out among
 * its test servers (each draws its own: the seed plus the server's place).
 * A request took ~2.2 ms on either backend on the 2-core machine, with the
 * client in the same process: 10,000 take ~22 s, which every PostgreSQL
 * server taking as many would triple.
 */
const REQUESTS = fuzzRuns(10_000);
const POSTGRES_SERVERS = BACKENDS.length - 1;
/** Requests in flight at once: enough to overlap PostgreSQL's round trips. */
const BATCH = 4;
const requestsOf = (backend: number) => BATCH * Math.ceil((backend === 0 ? REQUESTS : REQUESTS / POSTGRES_SERVERS) / BATCH);

const dir = mkdtempSync(join(tmpdir(), 'lq-fuzz-http-'));
const eventsFile = join(dir, 'sim.events');
let nodeIds: string[];
before(async () => {
  await writeEventFile(eventsFile, { seed: 11, blocks: 40, ordersPerBlock: 6 });
  nodeIds = [...new Set((await readBlocks(eventsFile)).flatMap((b) => b.signersAdded.map((s) => s.validatorId)))];
});
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Sends `request` on a kept-alive connection of `agent`; one that Node's
 * parser refuses goes on a connection of its own, since the server closes it
 * after answering (without saying so: a kept-alive connection could be handed
 * to the next request while it closes).
 */
function send(port: number, agent: Agent, request: FuzzRequest): Promise<FuzzAnswer> {
  const own = parserRefuses(request);
  return new Promise((resolve, reject) => {
    // latin1: the target's bytes go on the wire as they are, raw UTF-8 included.
    const req = httpRequest({
      host: '127.0.0.1', port, agent: own ? false : agent, path: request.target.toString('latin1'), headers: request.headers,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', (e) => reject(new Error(`GET ${shown(request)}: ${e.message}`, { cause: e })));
    req.end();
  });
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Rows as text: bigints and bytes spelled out, so that equal rows give equal text. */
const rowText = (rows: Record<string, unknown>[]) =>
  JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

/**
 * Everything the store holds: the embedded store's files, byte for byte, and
 * every table's rows; PostgreSQL's every table and sequence. The SQLite -shm
 * file is left out: it is the readers' shared index of the WAL, where every
 * reader marks what it reads, not data.
 */
async function storeSnapshot(fresh: FreshStore): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  if (fresh.config.databaseUrl === undefined) {
    const dataDir = fresh.config.dataDir;
    for (const name of readdirSync(dataDir).sort()) {
      const bytes = readFileSync(join(dataDir, name));
      // A reader may leave an empty WAL file where there was none: no data either way.
      if (!name.endsWith('-shm') && bytes.length > 0) snapshot[`file ${name}`] = sha256(bytes);
    }
    const tables = await fresh.select(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`);
    for (const { name } of tables) {
      const rows = (await fresh.select(`SELECT * FROM "${String(name)}"`)).map((row) => rowText([row])).sort();
      snapshot[`table ${String(name)}`] = `${rows.length} ${sha256(rows.join('\n'))}`;
    }
    return snapshot;
  }
  const tables = await fresh.select(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
  for (const { tablename } of tables) {
    const [digest] = await fresh.select(
      `SELECT count(*)::text AS n, md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), '')) AS h FROM "${String(tablename)}" t`,
    );
    snapshot[`table ${String(tablename)}`] = `${String(digest!.n)} ${String(digest!.h)}`;
  }
  for (const s of await fresh.select(`SELECT sequencename, last_value::text AS v FROM pg_sequences WHERE schemaname = 'public'`)) {
    snapshot[`sequence ${String(s.sequencename)}`] = String(s.v);
  }
  return snapshot;
}

type Connection = { edges: { node: Record<string, string>; cursor: string }[] };

/**
 * Ids, times and cursors the store holds, and ETags it issued, read through
 * the API; the validators' node ids (which a bundle's JSON leaves out) from
 * the event file.
 */
async function gatherPools(get: (target: string) => Promise<FuzzAnswer>, nodeIds: string[]): Promise<Pools> {
  const pools: Pools = {
    orderIds: [], partyIds: [], marketIds: [], references: [], times: [], nodeIds: [], submitters: [], epochSeqs: [],
    cursors: { orders: [], bundles: [] }, etags: [],
  };
  const page = async (target: string, field: string) => {
    const answer = await get(target);
    assert.equal(answer.status, 200, `${target}: ${answer.body.toString()}`);
    pools.etags.push(String(answer.headers.etag));
    const edges = (JSON.parse(answer.body.toString()) as Record<string, Connection>)[field]!.edges;
    pools.cursors[field]!.push(...edges.map((e) => e.cursor));
    return edges.map((e) => e.node);
  };
  const distinct = (xs: string[]) => [...new Set(xs)];
  const orders = await page('/api/v2/orders?pagination.first=5000', 'orders');
  assert.ok(orders.length > 50, 'the simulated store has orders');
  pools.orderIds = orders.map((o) => o.id!).slice(0, 200);
  pools.partyIds = distinct(orders.map((o) => o.partyId!));
  pools.marketIds = distinct(orders.map((o) => o.marketId!));
  pools.references = distinct(orders.map((o) => o.reference!)).slice(0, 50);
  pools.times = distinct(orders.map((o) => o.createdAt!)).slice(0, 100);
  // Cursors of the same endpoint under other filters and orderings.
  await page('/api/v2/orders?filter.statuses=STATUS_FILLED&pagination.first=50', 'orders');
  await page('/api/v2/orders?pagination.newestFirst=false&pagination.last=50', 'orders');
  const bundles = await page('/api/v2/erc20/multisigcontrol/signer/added/bundles?pagination.first=5000', 'bundles');
  assert.ok(bundles.length > 5, 'the simulated store has bundles');
  pools.nodeIds = nodeIds;
  pools.submitters = distinct(bundles.map((b) => b.submitter!));
  pools.epochSeqs = distinct(bundles.map((b) => b.epochSeq!));
  pools.times.push(...distinct(bundles.map((b) => b.timestamp!)).slice(0, 20));
  return pools;
}

/**
 * Every subset of the pagination parameters, each given a good value or one
 * bad one (or, a cursor, an empty one, which counts as absent): 400 if two of
 * them conflict or one is bad, else a page no longer than asked for.
 */
async function paginationCombinations(get: (target: string) => Promise<FuzzAnswer>, pools: Pools, statuses: Tally): Promise<number> {
  const good: Record<string, (field: string) => string> = {
    'pagination.first': () => '3', 'pagination.last': () => '4',
    'pagination.after': (field) => pools.cursors[field]![5]!, 'pagination.before': (field) => pools.cursors[field]![1]!,
    'pagination.newestFirst': () => 'false',
  };
  const bad: Record<string, (field: string) => string> = {
    'pagination.first': () => '0', 'pagination.last': () => '5001',
    'pagination.after': (field) => pools.cursors[field]![5]!.slice(1), 'pagination.before': (field) => pools.cursors[field === 'orders' ? 'bundles' : 'orders']![0]!,
    'pagination.newestFirst': () => 'maybe',
  };
  let sent = 0;
  for (const endpoint of ENDPOINTS.filter((e) => e.connection !== undefined && !e.path.includes('{'))) {
    const field = endpoint.connection!;
    for (let subset = 0; subset < 1 << PAGINATION.length; subset++) {
      const given = PAGINATION.filter((_p, i) => (subset & (1 << i)) !== 0);
      // No value bad, one bad, or (a cursor) one empty.
      const variants: { bad?: string; empty?: string }[] = [{}, ...given.map((p) => ({ bad: p }))];
      for (const p of given) if (p.endsWith('after') || p.endsWith('before')) variants.push({ empty: p });
      for (const variant of variants) {
        const present = new Set(given.filter((p) => p !== variant.empty));
        const conflict = (present.has('pagination.first') && present.has('pagination.last'))
          || (present.has('pagination.after') && present.has('pagination.before'))
          || (present.has('pagination.first') && present.has('pagination.before'))
          || (present.has('pagination.last') && present.has('pagination.after'));
        const query = given.map((p) => {
          const value = p === variant.empty ? '' : p === variant.bad ? bad[p]!(field) : good[p]!(field);
          return `${p}=${encodeURIComponent(value)}`;
        });
        const target = `${endpoint.path}?${query.join('&')}`;
        const answer = await get(target);
        sent++;
        statuses.add(String(answer.status));
        const request: FuzzRequest = { endpoint, path: endpoint.path, target: Buffer.from(target), headers: {} };
        const body = checkAnswer(request, answer);
        assert.equal(answer.status, conflict || variant.bad !== undefined ? 400 : 200, `${target}: ${answer.body.toString().slice(0, 300)}`);
        if (answer.status === 200) {
          const size = present.has('pagination.last') ? 4 : present.has('pagination.first') ? 3 : 1000;
          assert.ok((body as Record<string, Connection>)[field]!.edges.length <= size, `${target}: at most ${size} edges`);
        }
      }
    }
  }
  return sent;
}

for (const [place, backend] of BACKENDS.entries()) {
  test(`${backend.name}: ${requestsOf(place)} random requests over every endpoint through real HTTP, then every pagination combination`, async (t) => {
    const seed = fuzzSeed(t) + place;
    if (place > 0) t.diagnostic(`this server's requests: seed ${seed}`);
    const fresh = await backend.fresh(dir, 'fuzz-http');
    t.after(() => fresh.remove());
    const writer = await openWriter(fresh.config);
    await ingest(fileSource(eventsFile), writer);
    await writer.close();
    const snapshot = await storeSnapshot(fresh);

    const store = await openStore(fresh.config, { readOnly: true });
    const app = await buildApp({ store });
    let viaFastify = 0;
    app.addHook('onRequest', async () => void viaFastify++);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    const agent = new Agent({ keepAlive: true, maxSockets: BATCH });
    const statuses = new Tally();
    const byEndpoint = new Tally();
    let sent = 0;
    let refusedByParser = 0;
    const started = Date.now();
    try {
      const get = (target: string) => send(port, agent, { endpoint: ENDPOINTS[0]!, path: ENDPOINTS[0]!.path, target: Buffer.from(target), headers: {} });
      const pools = await gatherPools(get, nodeIds);
      const fastifyBefore = viaFastify;
      await fc.assert(
        fc.asyncProperty(fc.array(anyRequestArb(pools), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
          const answers = await Promise.all(batch.map((r) => send(port, agent, r)));
          answers.forEach((answer, i) => {
            const request = batch[i]!;
            sent++;
            statuses.add(String(answer.status));
            byEndpoint.add(request.endpoint.path);
            if (!parserRefuses(request)) {
              checkAnswer(request, answer);
              return;
            }
            // Raw non-ASCII bytes: refused by Node's parser; the envelope of that refusal is fuzz-http-raw's to check.
            refusedByParser++;
            assert.equal(answer.status, 400, `GET ${shown(request)}: Node's parser refuses a raw byte from 0x7f up`);
          });
        }),
        { numRuns: requestsOf(place) / BATCH, seed },
      );
      const fuzzMs = Date.now() - started;
      const combinations = await paginationCombinations(get, pools, statuses);
      t.diagnostic(`${sent} random requests in ${fuzzMs} ms, then ${combinations} pagination combinations`);
      t.diagnostic(`by status: ${statuses.toString()}; ${refusedByParser} of them refused by Node's parser (raw bytes from 0x7f up)`);
      t.diagnostic(`by endpoint: ${byEndpoint.toString()}`);
      const fastPath = statuses.total - (viaFastify - fastifyBefore);
      t.diagnostic(`answered before Fastify (the fast path): ${fastPath}`);
      assert.ok(fastPath > 0, 'the fast path answered some');
    } finally {
      agent.destroy();
      await app.close();
      await store.close();
    }
    assert.deepEqual(await storeSnapshot(fresh), snapshot, 'the store is what it was');
    t.diagnostic(`the store unchanged: ${Object.keys(snapshot).join(', ')}`);
  });
}
