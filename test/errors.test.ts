/**
 * The error catalogue (src/errors.ts, src/api/errors.ts): its size is pinned,
 * every kind names itself and has a stable code, crosses a thread as itself,
 * and is in the README's table with its exit status or HTTP status.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { API_ERROR_KINDS, ApiError } from '../src/api/errors.js';
import { ERROR_KINDS, fromWire, IngestError, InternalError, LedgerError, SystemError, toWire } from '../src/errors.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The README's table of exit statuses and errors: code -> its second column. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of README.matchAll(/^\| `(LQ_[A-Z_]+)` \| ([^|]+) \|/gm)) rows.set(m[1]!, m[2]!.trim());
  return rows;
}

test('the catalogue holds 44 kinds of error, each with its own code', () => {
  const codes = [...ERROR_KINDS, ...API_ERROR_KINDS].map((k) => k.code);
  assert.equal(codes.length, 44, 'a kind added or removed: update this count and the README table');
  assert.equal(new Set(codes).size, codes.length, 'codes are unique');
  for (const code of codes) assert.match(code, /^LQ_[A-Z_]+$/);
});

test('every kind is in the README table with its exit status, or its HTTP status for the API', () => {
  const table = documented();
  assert.equal(table.size, ERROR_KINDS.length + API_ERROR_KINDS.length, 'the table lists the catalogue, no more');
  for (const kind of ERROR_KINDS) {
    const row = table.get(kind.code);
    assert.ok(row, `${kind.code} is documented`);
    assert.equal(row, `${kind.exit}${kind.retryable ? ', retry' : ''}`, `${kind.code}: exit status as documented`);
  }
  for (const kind of API_ERROR_KINDS) {
    const row = table.get(kind.code);
    assert.ok(row, `${kind.code} is documented`);
    const error = new kind('x');
    assert.match(row, kind.code === 'LQ_HTTP_REFUSED' ? /^HTTP 4xx$/ : new RegExp(`^HTTP ${error.httpStatus}$`), kind.code);
  }
});

test('every kind names itself, and crosses a thread as itself', () => {
  for (const kind of ERROR_KINDS) {
    const e = new kind('what happened');
    assert.equal(e.name, kind.name);
    assert.equal(e.code, kind.code);
    assert.ok(e instanceof LedgerError);
    const back = fromWire(structuredClone(toWire(e)));
    assert.ok(back instanceof kind, `${kind.name} comes back as itself`);
    assert.equal(back.message, 'what happened');
    assert.equal(back.exitStatus, kind.exit);
  }
  for (const kind of API_ERROR_KINDS) assert.ok(new kind('x') instanceof ApiError);
});

test('what is not of the catalogue crosses as an internal error, or a system error if the OS raised it', () => {
  assert.ok(fromWire(toWire(new Error('a bug'))) instanceof InternalError);
  const enoent = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
  assert.ok(fromWire(toWire(enoent)) instanceof SystemError);
  assert.ok(fromWire({ code: 'LQ_NO_SUCH_CODE', message: 'from a newer version' }) instanceof InternalError);
  // A kind with fields of its own keeps its class and message; the fields stay on the side that raised it.
  const stopped = IngestError.at('bad', { source: 'test://x', offset: 5 }, 3n);
  assert.ok(fromWire(toWire(stopped)) instanceof IngestError);
  assert.equal(fromWire(toWire(stopped)).message, stopped.message);
});
