/**
 * Connections to PostgreSQL through `pg`: 64-bit integers come back as
 * bigint (never a rounded number), NUMERIC (our unsigned 64-bit columns) as
 * its exact decimal text, bytea as a Buffer.
 */
import pg from 'pg';

const INT8_OID = 20;

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

/** Seen in pg_stat_activity, so an operator can tell our sessions apart. */
export const APPLICATION_NAME = 'ledger-query';

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
  'plan_cache_mode=force_custom_plan',
  'enable_sort=off',
  'enable_bitmapscan=off',
  'enable_seqscan=off',
  'max_parallel_workers_per_gather=0',
].map((s) => `-c ${s}`).join(' ');

export function newPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types, application_name: APPLICATION_NAME, options: READER_SETTINGS });
  // An idle connection the server ends (a restart, pg_terminate_backend) is
  // dropped from the pool and the next query opens another; unhandled, the
  // error would end the process.
  pool.on('error', () => {});
  return pool;
}

export async function connect(url: string, role: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, types, application_name: `${APPLICATION_NAME} ${role}` });
  await client.connect();
  return client;
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
