/**
 * Is one PostgreSQL store the same as another? Asked two ways: through the
 * API (a fixed set of queries, byte for byte, headers included) and through
 * the tables (a digest of every row). Party and market numbers are left out
 * of the digest: they come from sequences, which a rolled-back transaction
 * advances too, so they may differ between stores that hold the same data.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import type { RunningServer } from './cli.js';
import { HISTORY_SQL } from './history.js';

const ORDERS = '/api/v2/orders';
const BUNDLES = '/api/v2/erc20/multisigcontrol/signer/added/bundles';

interface Answer { status: number; body: string; height: string | null; time: string | null }

async function get(server: RunningServer, path: string): Promise<Answer> {
  const res = await fetch(server.url + path);
  return {
    status: res.status, body: await res.text(),
    height: res.headers.get('x-block-height'), time: res.headers.get('x-block-timestamp'),
  };
}

interface Connection { edges: { node: Record<string, string> }[]; pageInfo: { hasNextPage: boolean; endCursor: string } }

/** Asks both servers `path`; the answers must be identical. Returns `want`'s parsed body. */
async function same(got: RunningServer, want: RunningServer, path: string): Promise<Record<string, Connection>> {
  const [a, b] = await Promise.all([get(got, path), get(want, path)]);
  assert.equal(b.status, 200, `${path}: ${b.body.slice(0, 300)}`);
  assert.deepEqual(a, b, `${path} differs`);
  return JSON.parse(b.body) as Record<string, Connection>;
}

/**
 * Every order page by page (so every order, and their count), then filtered
 * pages in both orderings and both directions, then bundles. Ids for the
 * filters come from `want`'s answers. Returns how many orders there are.
 */
export async function compareServers(got: RunningServer, want: RunningServer): Promise<number> {
  let orders = 0;
  let after = '';
  const nodes: Record<string, string>[] = [];
  for (;;) {
    const page = (await same(got, want, `${ORDERS}?pagination.first=5000${after}`)).orders!;
    orders += page.edges.length;
    if (nodes.length === 0) nodes.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) break;
    after = `&pagination.after=${page.pageInfo.endCursor}`;
  }
  assert.ok(orders > 0);

  const first = (await same(got, want, `${ORDERS}?pagination.first=1&filter.statuses=STATUS_ACTIVE`)).orders!.edges[0]!.node;
  const { marketId, partyId } = first;
  const reference = nodes.find((n) => n.reference !== '')?.reference;
  assert.ok(reference !== undefined, 'some order has a reference');
  const filtered = [
    `filter.statuses=STATUS_ACTIVE,STATUS_PARKED&pagination.first=200`,
    `filter.statuses=STATUS_FILLED&pagination.last=150`,
    `filter.marketIds=${marketId}&pagination.newestFirst=false&pagination.first=300`,
    `filter.marketIds=${marketId}&filter.liveOnly=true&pagination.last=100&pagination.newestFirst=false`,
    `filter.partyIds=${partyId}&pagination.first=50`,
    `filter.partyIds=network&filter.types=TYPE_NETWORK&pagination.last=20`,
    `filter.types=TYPE_LIMIT&filter.timeInForces=TIME_IN_FORCE_GTT,TIME_IN_FORCE_IOC&pagination.first=100`,
    `filter.excludeLiquidity=true&filter.liveOnly=true&pagination.first=100&pagination.newestFirst=false`,
    `filter.reference=${encodeURIComponent(reference)}&pagination.first=10`,
    `filter.dateRange.startTimestamp=${first.createdAt}&pagination.last=100`,
  ];
  for (const query of filtered) {
    const page = (await same(got, want, `${ORDERS}?${query}`)).orders!;
    // The next page too: cursors must lead to the same place in both.
    if (page.pageInfo.hasNextPage) await same(got, want, `${ORDERS}?${query}&pagination.after=${page.pageInfo.endCursor}`);
  }

  const bundles = (await same(got, want, `${BUNDLES}?pagination.first=1000`)).bundles!;
  assert.ok(bundles.edges.length > 0);
  const b = bundles.edges[0]!.node;
  for (const query of [
    'pagination.first=5&pagination.newestFirst=false',
    'pagination.last=7',
    `submitter=${b.submitter!.toUpperCase().replace('0X', '0x')}&pagination.first=20`,
    `epochSeq=${b.epochSeq}`,
  ]) await same(got, want, `${BUNDLES}?${query}`);
  return orders;
}

export interface TableDigest { rows: number; md5: string }

/** Each table as rows (as text) whose md5s are sorted and hashed: equal digests, equal tables. */
const TABLES: Record<string, string> = {
  blocks: 'SELECT * FROM blocks',
  last_block: 'SELECT * FROM last_block',
  parties: 'SELECT id FROM parties',
  markets: 'SELECT id FROM markets',
  orders_current: `SELECT to_jsonb(o) - 'party_no' - 'market_no' || jsonb_build_object('party', p.id, 'market', m.id) AS row
    FROM orders_current o JOIN parties p ON p.no = o.party_no JOIN markets m ON m.no = o.market_no`,
  orders_history: HISTORY_SQL,
  order_counts: 'SELECT * FROM order_counts',
  signer_added: 'SELECT * FROM signer_added',
  signer_removed: 'SELECT * FROM signer_removed',
  node_signatures: 'SELECT * FROM node_signatures',
};

export async function storeDigest(url: string): Promise<Record<string, TableDigest>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const digest: Record<string, TableDigest> = {};
    for (const [table, select] of Object.entries(TABLES)) {
      const { rows } = await client.query<{ rows: number; md5: string }>(
        `SELECT count(*)::int AS rows, md5(coalesce(string_agg(h, '' ORDER BY h), '')) AS md5
         FROM (SELECT md5(t::text) AS h FROM (${select}) t) x`,
      );
      digest[table] = rows[0]!;
    }
    return digest;
  } finally {
    await client.end();
  }
}
