/**
 * The raw query string as the original gateway reads it: every key repeated as
 * often as the client sent it, each dotted segment in snake_case or lowerCamel.
 */
import { MalformedQueryError, quote } from './errors.js';

/** One `key=value` pair, with the key spelled as the client sent it (for error messages). */
export interface QueryParam {
  readonly key: string;
  readonly value: string;
}

/** Query values grouped by canonical (dotted lowerCamel) name, in the order sent. */
export class QueryParams {
  readonly #byName = new Map<string, QueryParam[]>();

  add(key: string, value: string): void {
    const name = canonicalName(key);
    const existing = this.#byName.get(name);
    if (existing === undefined) this.#byName.set(name, [{ key, value }]);
    else existing.push({ key, value });
  }

  /** Every value given for `name`, under any spelling; empty when absent. */
  all(name: string): readonly QueryParam[] {
    return this.#byName.get(name) ?? [];
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }
}

const BAD_ESCAPE = /%(?![0-9a-fA-F]{2})/;

/**
 * Reads the query part of a request URL (everything after the first `?`).
 * A malformed %-escape is refused, as the original's Go parser does, rather
 * than read literally as URLSearchParams would.
 */
export function readQuery(url: string): QueryParams {
  const params = new QueryParams();
  const start = url.indexOf('?');
  if (start < 0) return params;
  const query = url.slice(start + 1);
  if (BAD_ESCAPE.test(query)) {
    const pair = query.split('&').find((p) => BAD_ESCAPE.test(p)) ?? query;
    throw new MalformedQueryError(`malformed query string: ${quote(pair)} has an invalid %-escape`);
  }
  for (const [key, value] of new URLSearchParams(query)) {
    params.add(key, value);
  }
  return params;
}

/** `filter.date_range.start_timestamp` -> `filter.dateRange.startTimestamp`. */
export function canonicalName(key: string): string {
  if (!key.includes('_')) return key;
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/** The path of a request URL: everything before the first `?`. */
export function pathOf(url: string): string {
  const end = url.indexOf('?');
  return end < 0 ? url : url.slice(0, end);
}
