/**
 * The PostgreSQL servers the tests run against. `npm test` (../run.ts) starts
 * a throwaway server of every build found on the machine (./pg-server.ts) and
 * hands them to every test process as TEST_POSTGRES_SERVERS; a suite that
 * needs PostgreSQL runs once per server (forEachServer). TEST_DATABASE_URL
 * names a server of yours to use instead. Each test gets a database of its
 * own, so test files run side by side without meeting.
 */
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import pg from 'pg';

export interface TestServer {
  /** Short and stable: `embedded-18`, `distribution-15`, `given`. */
  id: string;
  /** For test names: `PostgreSQL 15.18 (/usr/lib/postgresql/15)`. */
  label: string;
  /** The address of a database on it, as superuser. */
  url: string;
  /** Whether the server can JIT-compile queries. */
  jitAvailable: boolean;
}

export const SERVERS_ENV = 'TEST_POSTGRES_SERVERS';

let servers: TestServer[] | undefined;

/** Every server of this run, in the order they were started. */
export function testServers(): readonly TestServer[] {
  servers ??= readServers();
  return servers;
}

function readServers(): TestServer[] {
  const listed = process.env[SERVERS_ENV];
  if (listed) return JSON.parse(listed) as TestServer[];
  const given = process.env.TEST_DATABASE_URL;
  if (given) return [{ id: 'given', label: 'PostgreSQL at TEST_DATABASE_URL', url: given, jitAvailable: false }];
  throw new Error(
    'this test needs PostgreSQL: run it through `node dist/test/run.js FILE...` (as `npm test` does), ' +
      'which starts throwaway servers, or set TEST_DATABASE_URL to a server of yours',
  );
}

/** Declares a suite once per server, named after it. */
export function forEachServer(suite: (server: TestServer) => void): void {
  for (const server of testServers()) describe(server.label, () => suite(server));
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface TestDatabase {
  url: string;
  /** Drops the database, ending any session still connected to it. */
  drop(): Promise<void>;
}

/** A new empty database on `server`. */
export async function createTestDatabase(server: TestServer): Promise<TestDatabase> {
  const name = `lq_test_${randomBytes(6).toString('hex')}`;
  await query(server.url, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(server.url, name),
    async drop() {
      await query(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Runs one statement on a connection of its own. */
export async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
