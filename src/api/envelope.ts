/**
 * The connection envelope around a page of nodes, built as text: the store
 * hands each node over already encoded, and parsing 1000 of them only to
 * serialize them again would dominate a large page.
 */
import type { FastifyReply } from 'fastify';
import type { Page } from '../domain/page.js';
import type { CursorCodec } from './cursor.js';

/**
 * `{"<field>":{"edges":[{"node":...,"cursor":"..."}],"pageInfo":{...}}}`.
 * Cursors are base64url, so they need no JSON escaping.
 */
export function connectionJson<K>(field: string, page: Page<K>, cursors: CursorCodec<K>): string {
  const { rows } = page;
  let startCursor = '';
  let endCursor = '';
  let edges = '';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const cursor = cursors.encode(row.key);
    if (i === 0) startCursor = cursor;
    endCursor = cursor;
    edges += (i === 0 ? '{"node":' : ',{"node":') + row.json + ',"cursor":"' + cursor + '"}';
  }
  return (
    '{"' + field + '":{"edges":[' + edges +
    '],"pageInfo":{"hasNextPage":' + page.hasNextPage +
    ',"hasPreviousPage":' + page.hasPreviousPage +
    ',"startCursor":"' + startCursor +
    '","endCursor":"' + endCursor + '"}}}'
  );
}

/** Indented for `?pretty`; the only path that parses the nodes. */
export function prettyJson(json: string): string {
  return JSON.stringify(JSON.parse(json), null, 2);
}

/** Sends JSON text as is (Fastify adds `; charset=utf-8`). */
export function sendJson(reply: FastifyReply, json: string, pretty: boolean): FastifyReply {
  return reply.type('application/json').send(pretty ? prettyJson(json) : json);
}
