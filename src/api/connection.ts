/**
 * The connection around a page of nodes (`{"orders":{"edges":[...],
 * "pageInfo":{...}}}`), built as bytes: the store hands each node over
 * already encoded, and parsing 1000 of them only to serialize them again
 * would dominate a large page.
 */
import type { FastifyReply } from 'fastify';
import type { Page } from '../domain/page.js';
import type { CursorCodec } from './cursor.js';

/** The most UTF-8 bytes a string of `length` UTF-16 units can take (a surrogate pair: 4 bytes for 2). */
const utf8Bound = (length: number) => 3 * length;

/**
 * Writes a body's texts as UTF-8 into one buffer, kept from body to body and
 * grown to the largest body written; each body is copied out at its size.
 */
export class BodyWriter {
  private buffer: Buffer;
  private at = 0;

  constructor(initialBytes = 1 << 16) {
    this.buffer = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Starts a body, with room made up front for `units` UTF-16 units of text. */
  start(units: number): void {
    this.at = 0;
    this.reserve(utf8Bound(units));
  }

  put(text: string): void {
    this.reserve(this.at + utf8Bound(text.length));
    this.at += this.buffer.write(text, this.at);
  }

  /** The body written since start(). */
  finish(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.at));
  }

  private reserve(bytes: number): void {
    if (this.buffer.length >= bytes) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(bytes, 2 * this.buffer.length));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}

const pageWriter = new BodyWriter();

/**
 * `{"<field>":{"edges":[{"node":...,"cursor":"..."}],"pageInfo":{...}}}` as
 * UTF-8. Each edge is written straight into one buffer, which takes half the
 * time of encoding the edges joined into one string (BENCHMARKS.md, "Figures behind the code").
 * Cursors are base64url, so they need no JSON escaping.
 */
export function connectionBody<K>(field: string, page: Page<K>, cursors: CursorCodec<K>, out = pageWriter): Buffer {
  const { rows } = page;
  // An edge adds ~85 characters to its node: room for the whole page is made once.
  let units = field.length + 200;
  for (const row of rows) units += row.json.length + 100;
  out.start(units);
  out.put('{"' + field + '":{"edges":[');
  let startCursor = '';
  let endCursor = '';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const cursor = cursors.encode(row.key);
    if (i === 0) startCursor = cursor;
    endCursor = cursor;
    // The node on its own: an edge joined into one string first is flattened
    // by the write, and kept memory for the collector to find (BENCHMARKS.md,
    // "Memory under pages of 1000").
    out.put(i === 0 ? '{"node":' : ',{"node":');
    out.put(row.json);
    out.put(',"cursor":"' + cursor + '"}');
  }
  out.put(
    '],"pageInfo":{"hasNextPage":' + page.hasNextPage +
    ',"hasPreviousPage":' + page.hasPreviousPage +
    ',"startCursor":"' + startCursor +
    '","endCursor":"' + endCursor + '"}}}',
  );
  return out.finish();
}

/** Indented for `?pretty`; the only path that parses the nodes. */
export function prettyJson(json: string): string {
  return JSON.stringify(JSON.parse(json), null, 2);
}

/** A page body indented for `?pretty`. */
export function prettyBody(body: Buffer): Buffer {
  return Buffer.from(prettyJson(body.toString('utf8')));
}

/** Sends JSON text as is (Fastify adds `; charset=utf-8`). */
export function sendJson(reply: FastifyReply, json: string, pretty: boolean): FastifyReply {
  return reply.type('application/json').send(pretty ? prettyJson(json) : json);
}
