/**
 * Does a copy answer as its source? Every endpoint, asked of both servers
 * and compared byte for byte with the block headers: every order page by
 * page, the lists under each filter value the store holds (statuses, types,
 * times in force, markets, parties, references, live only, no liquidity, a
 * date range) both ways, each order, its versions and each version of it,
 * both bundle lists, and the order stream's snapshot.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { RunningServer } from './cli.js';

const ORDERS = '/api/v2/orders';
const ADDED = '/api/v2/erc20/multisigcontrol/signer/added/bundles';
const REMOVED = '/api/v2/erc20/multisigcontrol/signer/removed/bundles';

interface Answer { status: number; height: string | null; time: string | null; body: string }

async function get(url: string, path: string): Promise<Answer> {
  const res = await fetch(url + path);
  return { status: res.status, height: res.headers.get('x-block-height'), time: res.headers.get('x-block-timestamp'), body: await res.text() };
}

type OrderNode = Record<string, string> & { id: string; version: string };

/** Every order node of `url`, page by page (first), and the paths of those pages. */
async function allOrders(url: string): Promise<{ nodes: OrderNode[]; paths: string[] }> {
  const nodes: OrderNode[] = [];
  const paths: string[] = [];
  let after = '';
  for (;;) {
    const path = `${ORDERS}?pagination.first=1000${after}`;
    paths.push(path);
    const a = await get(url, path);
    assert.equal(a.status, 200, `${path}: ${a.body.slice(0, 300)}`);
    const page = (JSON.parse(a.body) as { orders: { edges: { node: OrderNode }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }).orders;
    nodes.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) break;
    after = `&pagination.after=${page.pageInfo.endCursor}`;
  }
  return { nodes, paths };
}

const distinct = (nodes: OrderNode[], field: string) => [...new Set(nodes.map((n) => n[field]).filter((v): v is string => typeof v === 'string' && v !== ''))];

/** The paths to ask, built from `want`'s own answers. */
export async function answerPaths(want: RunningServer): Promise<string[]> {
  const { nodes, paths } = await allOrders(want.url);
  const filters: string[] = [
    ...distinct(nodes, 'status').map((v) => `filter.statuses=${v}`),
    ...distinct(nodes, 'type').map((v) => `filter.types=${v}`),
    ...distinct(nodes, 'timeInForce').map((v) => `filter.timeInForces=${v}`),
    ...distinct(nodes, 'marketId').map((v) => `filter.marketIds=${v}`),
    ...distinct(nodes, 'partyId').slice(0, 20).map((v) => `filter.partyIds=${v}`),
    ...distinct(nodes, 'reference').slice(0, 10).map((v) => `filter.reference=${encodeURIComponent(v)}`),
    'filter.liveOnly=true', 'filter.excludeLiquidity=true', 'filter.statuses=STATUS_REJECTED',
  ];
  const middle = nodes[Math.floor(nodes.length / 2)];
  if (middle !== undefined) filters.push(`filter.dateRange.startTimestamp=${middle.createdAt}`, `filter.dateRange.endTimestamp=${middle.createdAt}`);
  for (const f of filters) paths.push(`${ORDERS}?${f}&pagination.first=50`, `${ORDERS}?${f}&pagination.last=20&pagination.newestFirst=false`);
  for (const n of nodes.slice(0, 200)) {
    paths.push(`/api/v2/order/${n.id}`, `/api/v2/order/versions/${n.id}`);
    for (let v = 1n; v <= BigInt(n.version) && v <= 5n; v++) paths.push(`/api/v2/order/${n.id}?version=${v}`);
  }
  for (const list of [ADDED, REMOVED]) paths.push(`${list}?pagination.first=1000`, `${list}?pagination.last=10&pagination.newestFirst=false`);
  return paths;
}

/** The order stream's snapshot frames, as text, up to the last page. */
export function streamSnapshot(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/v2/stream/orders`, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        const lines = text.split('\n');
        const last = lines.findIndex((l) => l.includes('"lastPage":true'));
        if (last >= 0) {
          req.destroy();
          resolve(lines.slice(0, last + 1).join('\n'));
        }
      });
      res.on('error', () => {});
      res.on('end', () => reject(new Error(`the stream ended before its snapshot's last page: ${text.slice(0, 300)}`)));
    });
    req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
    req.end();
  });
}

/** Every path answers the same bytes, status and block headers from `got` as from `want`; returns how many were asked. */
export async function sameAnswers(got: RunningServer, want: RunningServer, what: string): Promise<number> {
  const paths = await answerPaths(want);
  for (const path of paths) {
    const [a, b] = await Promise.all([get(got.url, path), get(want.url, path)]);
    assert.deepEqual(a, b, `${what}: ${path} differs`);
  }
  assert.equal(await streamSnapshot(got.url), await streamSnapshot(want.url), `${what}: the stream's snapshot differs`);
  return paths.length + 1;
}
