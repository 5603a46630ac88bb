/**
 * A listing served by a real server, held page by page to the model's pages
 * (docs/compatibility.md, sections 1 and 5): each answer's bytes must be the
 * connection the model builds from its own rows, flags and block. Cursors are
 * opaque (section 11.2), so the model keeps its own place, the last row of
 * its previous page, and the server's cursors are only sent back to the
 * server and put where the model's text has a cursor.
 */
import assert from 'node:assert/strict';
import { microsFloor, pageOf } from './model.js';
import type { ModelBlockStamp, ModelPage, ModelRow } from './model-types.js';

/** What a server answered: status, block headers and the body's exact text. */
export interface ServedAnswer {
  status: number;
  height: string | undefined;
  timestamp: string | undefined;
  body: string;
}

/** Asks the server under test for a path and query. */
export type Ask = (url: string) => Promise<ServedAnswer>;

/** A listing as the model has it: where it is served, its connection's key, and every matching row in ascending order. */
export interface ModelListing<K> {
  path: string;
  key: 'orders' | 'bundles';
  rows: readonly ModelRow<K>[];
  compare: (a: K, b: K) => number;
  /** The block every answer names (section 7): the model's last block. */
  lastBlock: ModelBlockStamp | undefined;
}

/** One page of a walk: its size, and whether it goes backward (`last`, before) or forward (`first`, after). */
export interface Step {
  size: number;
  backward: boolean;
}

/** The connection's text as section 1 prints it, the model's nodes and flags with the server's cursors where cursors go. */
export function connectionText<K>(key: string, page: ModelPage<K>, cursors: readonly string[]): string {
  const cursor = (i: number) => JSON.stringify(cursors[i] ?? `<no cursor for edge ${i}>`);
  const edges = page.rows.map((r, i) => `{"node":${r.json},"cursor":${cursor(i)}}`).join(',');
  const [start, end] = page.rows.length === 0 ? ['""', '""'] : [cursor(0), cursor(page.rows.length - 1)];
  return `{"${key}":{"edges":[${edges}],"pageInfo":{"hasNextPage":${page.hasNextPage},"hasPreviousPage":${page.hasPreviousPage},` +
    `"startCursor":${start},"endCursor":${end}}}}`;
}

/** An answer read as a connection: each node's text, each edge's cursor and the flags; undefined when it is none. */
function connectionOf(body: string, key: string): { nodes: string[]; cursors: string[]; flags: unknown[] } | undefined {
  try {
    const c = (JSON.parse(body) as Record<string, { edges: { node: unknown; cursor: unknown }[]; pageInfo: Record<string, unknown> }>)[key]!;
    return {
      nodes: c.edges.map((e) => JSON.stringify(e.node)), cursors: c.edges.map((e) => String(e.cursor)),
      flags: [c.pageInfo.hasNextPage, c.pageInfo.hasPreviousPage],
    };
  } catch {
    return undefined;
  }
}

/** `query` (as the client spells it, escaped) with the step's page size and the server's cursor. */
function stepUrl(path: string, query: string, step: Step, cursor: string | undefined): string {
  const size = `${step.backward ? 'pagination.last' : 'pagination.first'}=${step.size}`;
  const from = cursor === undefined ? '' : `&${step.backward ? 'pagination.before' : 'pagination.after'}=${encodeURIComponent(cursor)}`;
  return `${path}?${query === '' ? '' : `${query}&`}${size}${from}`;
}

/**
 * Walks the listing with `steps`, each page after (or before) the previous
 * one's edge, comparing every answer with the model's page; returns the
 * model's pages. `query` is the filters (and newestFirst, when given) as a
 * client spells them; `newestFirst` and `listing.rows` are the model's reading of them.
 */
export async function compareWalk<K>(
  ask: Ask, listing: ModelListing<K>, query: string, newestFirst: boolean, steps: readonly Step[], what = '',
): Promise<ModelPage<K>[]> {
  const pages: ModelPage<K>[] = [];
  let place: K | undefined;
  let serverCursor: string | undefined;
  for (const [i, step] of steps.entries()) {
    const page = pageOf(listing.rows, listing.compare, { newestFirst, mode: step.backward ? 'last' : 'first', limit: step.size, cursor: place });
    const url = stepUrl(listing.path, query, step, serverCursor);
    const answer = await ask(url);
    const where = `${what} step ${i}: ${url}`;
    assert.equal(answer.status, 200, `${where}: ${answer.body.slice(0, 500)}`);
    assert.equal(answer.height, String(listing.lastBlock?.height ?? 0n), `${where}: X-Block-Height`);
    assert.equal(answer.timestamp, String(microsFloor(listing.lastBlock?.time ?? 0n)), `${where}: X-Block-Timestamp`);
    const got = connectionOf(answer.body, listing.key);
    // Rows and flags first, one node a line, for a readable difference; then every byte.
    assert.deepEqual(got?.nodes, page.rows.map((r) => r.json), `${where}: the rows`);
    assert.deepEqual(got.flags, [page.hasNextPage, page.hasPreviousPage], `${where}: hasNextPage, hasPreviousPage`);
    const cursors = got.cursors;
    for (const c of cursors) assert.match(c, /^[A-Za-z0-9_-]+$/, `${where}: a cursor needs no escaping in a URL (section 11.2)`);
    assert.equal(answer.body, connectionText(listing.key, page, cursors), where);
    pages.push(page);
    // The model's next page starts from its own row; the server's from the cursor it gave for that row.
    const edge = step.backward ? 0 : page.rows.length - 1;
    place = page.rows[edge]?.key;
    serverCursor = cursors[edge];
  }
  return pages;
}

/**
 * The whole listing in pages of `size`, forward to its end and then backward
 * from its end, every page compared with the model's; returns the rows of
 * the forward walk.
 */
export async function compareWholeListing<K>(
  ask: Ask, listing: ModelListing<K>, query: string, newestFirst: boolean, size: number, what = '',
): Promise<ModelRow<K>[]> {
  const pages = Math.ceil(listing.rows.length / size) || 1;
  const forward = await compareWalk(ask, listing, query, newestFirst, Array.from({ length: pages }, () => ({ size, backward: false })), `${what} forward`);
  assert.equal(forward.at(-1)!.hasNextPage, false, `${what}: the forward walk reaches the end`);
  const backward = await compareWalk(ask, listing, query, newestFirst, Array.from({ length: pages }, () => ({ size, backward: true })), `${what} backward`);
  assert.equal(backward.at(-1)!.hasPreviousPage, false, `${what}: the backward walk reaches the start`);
  return forward.flatMap((p) => p.rows);
}

/** An Ask over a Fastify-like app's inject. */
export function injecting(app: { inject(opts: { url: string }): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }> }): Ask {
  return async (url) => {
    const res = await app.inject({ url });
    const header = (name: string) => (res.headers[name] === undefined ? undefined : String(res.headers[name]));
    return { status: res.statusCode, height: header('x-block-height'), timestamp: header('x-block-timestamp'), body: res.body };
  };
}

/** An Ask over HTTP to a running server at `base`. */
export function fetching(base: string): Ask {
  return async (url) => {
    const res = await fetch(base + url);
    return {
      status: res.status, height: res.headers.get('x-block-height') ?? undefined, timestamp: res.headers.get('x-block-timestamp') ?? undefined,
      body: await res.text(),
    };
  };
}
