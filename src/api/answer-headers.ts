/**
 * The one writer of response headers, answers' and refusals' alike. Every
 * response carries the common headers: COMMON_HEADERS, then what the front
 * door adds for its request (CORS, the rate limit's state: ./front-door.ts).
 * An answer adds its own (the block it names, its ETag, Vary, its type and
 * length), made once per answer and delivery and kept with it
 * (./answer-cache.ts), so that a cached answer costs no header building; a
 * refusal adds the block known and its type (./refusal.ts). Adding a header
 * to every response is one edit: COMMON_HEADERS.
 *
 * Headers travel as flat lists, [name, value, ...], which Node's writeHead
 * takes as they are (an object would be copied into one).
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { BlockStamp } from '../domain/page.js';
import { blockHeaderValues, BLOCK_HEIGHT_HEADER, BLOCK_TIMESTAMP_HEADER } from './block-headers.js';

/** Headers as [name, value, name, value, ...]. */
export type HeaderList = readonly string[];

/** The type of every JSON body, answers' and refusals' alike. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Headers every response carries, whichever path wrote it: no guessing a type the body does not have. */
export const COMMON_HEADERS: HeaderList = ['X-Content-Type-Options', 'nosniff'];

/** The block headers naming `block` (`0` while none is stored). */
export function blockHeaderList(block: BlockStamp | undefined): HeaderList {
  const [height, micros] = blockHeaderValues(block);
  return [BLOCK_HEIGHT_HEADER, height, BLOCK_TIMESTAMP_HEADER, micros];
}

/** Sets `headers` on a response another writer sends (Fastify, the stream), names in the case given. */
export function setHeaders(res: ServerResponse, headers: HeaderList): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
}

/** `headers` as a list (undefined values left out). */
export function headerList(headers: OutgoingHttpHeaders): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out.push(name, String(value));
  return out;
}

/** The values `headers` give `name` (case aside). */
export function valuesOf(headers: HeaderList, name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === name) out.push(headers[i + 1]!);
  return out;
}

/** `base` with `over` in place of the headers it names too (case aside), as setHeader would leave them. */
export function merged(base: HeaderList, over: HeaderList): string[] {
  const named = new Set(namesOf(over));
  const out: string[] = [];
  for (let i = 0; i < base.length; i += 2) if (!named.has(base[i]!.toLowerCase())) out.push(base[i]!, base[i + 1]!);
  return out.concat(over);
}

/** The names in `headers`, in lower case. */
const namesOf = (headers: HeaderList) => headers.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
