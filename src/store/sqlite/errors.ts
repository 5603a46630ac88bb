/**
 * What SQLite (through better-sqlite3) throws, as errors of the catalogue
 * (../../errors.ts): the one place that knows SQLite's result codes, as
 * ../postgres/errors.ts is for PostgreSQL's, so that a file that is not a
 * store is said on one line, naming it, rather than as a bug.
 */
import { LedgerError, StoreCorruptError, SystemError } from '../../errors.js';

/** Result codes of a file that is not a SQLite database, or a damaged one. */
const NOT_A_STORE = /^SQLITE_(NOTADB|CORRUPT)/;

/** Result codes of the operating system refusing: the file cannot be opened, read or written. */
const REFUSED = /^SQLITE_(CANTOPEN|PERM|READONLY|IOERR|FULL|AUTH)/;

/** `e` as an error of the catalogue; `path` names the file in messages. Anything else is returned as it is. */
export function fromSqlite(e: unknown, path: string): unknown {
  if (e instanceof LedgerError || !(e instanceof Error)) return e;
  const code = (e as Error & { code?: unknown }).code;
  if (typeof code === 'string' && NOT_A_STORE.test(code)) {
    return new StoreCorruptError(`${path} is not a ledger-query store: ${e.message} (${code}); move it away, or point --data-dir elsewhere`, { cause: e });
  }
  if (typeof code === 'string' && REFUSED.test(code)) return new SystemError(`${path}: ${e.message} (${code})`, { cause: e });
  // better-sqlite3 checks the folder itself, with a TypeError.
  if (e instanceof TypeError && /directory does not exist/.test(e.message)) return new SystemError(`${path}: ${e.message}`, { cause: e });
  return e;
}
