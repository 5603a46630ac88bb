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

export function newPool(url: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString: url, max, types, application_name: APPLICATION_NAME });
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
