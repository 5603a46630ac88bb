/**
 * What pg and the server throw, as errors of the catalogue (../../errors.ts):
 * the one place that knows SQLSTATEs and socket error codes, so that the
 * command line and the API need not.
 */
import pg from 'pg';
import { DatabaseError, DatabaseUnreachableError, LedgerError, QueryTimeoutError } from '../../errors.js';
import { displayUrl } from './connection.js';

/** SQLSTATEs of a server that will not let this instance write: a SELECT-only role, a read replica. */
const WRITE_REFUSED = new Set(['42501', '25006']);

/** Socket errors of a server that cannot be reached. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);

/** `e` as an error of the catalogue; `url` names the database in messages (its password hidden). */
export function fromPostgres(e: unknown, url: string): unknown {
  if (e instanceof LedgerError || !(e instanceof Error)) return e;
  if (e instanceof pg.DatabaseError && e.code === '57014' && /statement timeout/.test(e.message)) {
    return new QueryTimeoutError(`PostgreSQL cancelled a query past its time limit: ${e.message}`, { cause: e });
  }
  // pg's own limits (./connection.ts): a server that does not answer in time, no connection free in time.
  if (/^(Query read timeout|timeout exceeded when trying to connect)$/.test(e.message)) {
    return new QueryTimeoutError(`PostgreSQL at ${displayUrl(url)}: ${e.message}`, { cause: e });
  }
  if (e instanceof pg.DatabaseError) {
    const hint = WRITE_REFUSED.has(e.code ?? '')
      ? ' (an instance that only serves queries, with a role that may only SELECT or on a read replica, is started with serve --no-ingest)'
      : '';
    // Authentication and connection-level refusals (class 28, 08, 57P) name the server: the operator's fix is there.
    const where = /^(28|08|57P)/.test(e.code ?? '') ? ` (${displayUrl(url)})` : '';
    return new DatabaseError(`PostgreSQL: ${e.message}${where}${hint}`, { cause: e });
  }
  const code = (e as NodeJS.ErrnoException).code;
  if ((typeof code === 'string' && UNREACHABLE.has(code)) || /Connection terminated|connection timeout/i.test(e.message)) {
    return new DatabaseUnreachableError(`cannot reach PostgreSQL at ${displayUrl(url)}: ${e.message}`, { cause: e });
  }
  return e;
}
