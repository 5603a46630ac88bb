/**
 * Connections to PostgreSQL through `pg`: 64-bit integers come back as
 * bigint (never a rounded number), NUMERIC (our unsigned 64-bit columns) as
 * its exact decimal text, bytea as a Buffer.
 */
import pg from 'pg';
import { UnsupportedDatabaseError } from '../../errors.js';
import { incompleteError } from '../incomplete.js';

/** The table that marks a database a copy is building, or left incomplete (./copy-target.ts). */
export const COPY_MARK = 'lq_copy_incomplete';

const INT8_OID = 20;

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

/** Seen in pg_stat_activity, so an operator can tell our sessions apart. */
export const APPLICATION_NAME = 'ledger-query';

/**
 * Settings of every session we open. No JIT compilation: a statement of ours
 * reads a few rows, and compiling one costs a hundred times more than running
 * it (BENCHMARKS.md, "Figures behind the code"). Servers built with LLVM compile whatever their planner costs
 * above jit_above_cost, and the readers' disabled plan nodes below add 10^10
 * to a cost on PostgreSQL 17 and older.
 */
const SESSION_SETTINGS = ['jit=off'];

/**
 * Settings of the sessions that answer queries:
 * - a plan for the values at hand each time: a generic plan of a prepared
 *   page does not know a status is rare, and would walk the whole time index
 *   for it;
 * - every page is built to be index range scans in key order (../page-sql.ts),
 *   and must stay one however the statistics drift: sorting, bitmap and
 *   sequential scans are ruled out, so that PostgreSQL takes them only where
 *   no index can serve (seen without: a bitmap scan and a sort for a rare
 *   status, a sequential scan for the cursor's existence check, whenever
 *   the estimates made them look cheaper);
 * - no parallel plans: a page reads a few rows, and its statement relies on
 *   UNION ALL returning its arms in turn (./store.ts), which a Parallel
 *   Append would not.
 */
const READER_SETTINGS = [
  ...SESSION_SETTINGS,
  'plan_cache_mode=force_custom_plan',
  'enable_sort=off',
  'enable_bitmapscan=off',
  'enable_seqscan=off',
  'max_parallel_workers_per_gather=0',
];


/**
 * The connection's config: `settings` go in the startup packet's options,
 * after any the URL (`?options=`) or PGOPTIONS gives, so that ours win; pg
 * would otherwise let the URL's replace ours whole.
 */
function connectionConfig(url: string, settings: readonly string[]): pg.ClientConfig {
  const u = new URL(url);
  const given = u.searchParams.get('options') ?? process.env.PGOPTIONS ?? '';
  u.searchParams.delete('options');
  const options = [given, ...settings.map((s) => `-c ${s}`)].filter((o) => o !== '').join(' ');
  return { connectionString: u.toString(), types, options };
}

/**
 * The pool of the sessions that answer queries. With `queryTimeoutMs`, the
 * server cancels a statement running longer (statement_timeout), pg gives up
 * on one the server does not answer a second after that, and a query waits
 * as long at most for a free connection.
 */
export function newPool(url: string, max: number, queryTimeoutMs?: number): pg.Pool {
  const limited = queryTimeoutMs !== undefined && queryTimeoutMs > 0;
  const settings = limited ? [...READER_SETTINGS, `statement_timeout=${queryTimeoutMs}`] : READER_SETTINGS;
  const pool = new pg.Pool({
    ...connectionConfig(url, settings), max, application_name: APPLICATION_NAME,
    ...(limited && { query_timeout: queryTimeoutMs + 1000, connectionTimeoutMillis: queryTimeoutMs }),
  });
  // An idle connection the server ends (a restart, pg_terminate_backend) is
  // dropped from the pool and the next query opens another; unhandled, the
  // error would end the process.
  pool.on('error', () => {});
  return pool;
}

export async function connect(url: string, role: string): Promise<pg.Client> {
  const client = new pg.Client({ ...connectionConfig(url, SESSION_SETTINGS), application_name: `${APPLICATION_NAME} ${role}` });
  await client.connect();
  return client;
}

/** A session of ours whose statement another session can cancel: the server process serving it beside it. */
export interface CancellableSession {
  client: pg.Client;
  pid: number;
}

/** Connects as connect() does, an error on the idle connection ignored (the next statement fails instead), and learns its server process. */
export async function connectCancellable(url: string, role: string): Promise<CancellableSession> {
  const client = await connect(url, role);
  client.on('error', () => {});
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { client, pid: rows[0]!.pid };
}

/** Cancels what `session` runs, through `via` (another session); a cancel that cannot be sent is left: the caller ends the session anyway. */
export async function cancelStatement(via: pg.ClientBase, session: CancellableSession): Promise<void> {
  await via.query('SELECT pg_cancel_backend($1)', [session.pid]).catch(() => undefined);
}

/** The oldest PostgreSQL we test on (`npm test` runs every suite on it), as server_version_num counts. */
export const OLDEST_SERVER = 130000;

/**
 * Run once per store or writer as it opens: fails on a server older than we
 * support, on a database a copy left incomplete, and unless the session runs with our settings: something between
 * us and the server (a connection pooler, say) may drop the startup options,
 * and then every page would be JIT-compiled and planned without our rules.
 */
export async function checkSession(client: pg.ClientBase, options: { allowIncomplete?: boolean } = {}): Promise<void> {
  const { rows } = await client.query<{ num: string; version: string; jit: string; incomplete: boolean }>(
    `SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version, current_setting('jit') AS jit,
       to_regclass('${COPY_MARK}') IS NOT NULL AS incomplete`,
  );
  const { num, version, jit, incomplete } = rows[0]!;
  // A copy cut short may hold part of the data (../copy/): refused before anything reads or migrates it.
  if (incomplete && options.allowIncomplete !== true) throw incompleteError(`PostgreSQL database ${(client as pg.ClientBase & { database?: string }).database ?? ''}`);
  if (Number(num) < OLDEST_SERVER) {
    throw new UnsupportedDatabaseError(`PostgreSQL ${version} is older than ledger-query supports: use PostgreSQL ${OLDEST_SERVER / 10000} or newer`);
  }
  if (jit !== 'off') {
    throw new UnsupportedDatabaseError(
      `the PostgreSQL session runs with jit=${jit}, not the jit=off ledger-query asked for in its connection's startup options: ` +
        'something between ledger-query and the server (a connection pooler?) drops them; connect to the server directly, or through a pooler that passes them',
    );
  }
}

/** The URL with its password hidden, for messages and logs. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
