/**
 * The settings our PostgreSQL sessions run with (jit off, and the readers'
 * planner rules) ride in each connection's startup options: options of the
 * user's own (the URL's `?options=`) are kept beside them but cannot undo
 * them, and a session that comes up without them (a pooler dropped them) is
 * refused at once rather than served slowly; so is a server older than 13.
 */
import assert from 'node:assert/strict';
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type pg from 'pg';
import { checkSession } from '../../../src/store/postgres/connection.js';
import { openPostgresStore } from '../../../src/store/postgres/store.js';
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { createTestDatabase, forEachServer, query, type TestDatabase } from '../../support/postgres.js';

/**
 * A TCP proxy to `target` that drops the `options` parameter from each
 * connection's startup message and passes everything else through: what a
 * pooler that ignores startup parameters does.
 */
async function optionsDroppingProxy(target: URL): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = tcpConnect(Number(target.port), target.hostname);
    sockets.add(upstream);
    let head = Buffer.alloc(0);
    const onStartup = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.length < 4 || head.length < head.readInt32BE(0)) return;
      client.off('data', onStartup);
      const length = head.readInt32BE(0);
      const fields = head.subarray(8, length - 1).toString('utf8').split('\0');
      const kept: string[] = [];
      for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] !== 'options') kept.push(fields[i]!, fields[i + 1]!);
      const body = Buffer.from(`${kept.join('\0')}\0\0`, 'utf8');
      const startup = Buffer.alloc(8);
      startup.writeInt32BE(8 + body.length, 0);
      head.copy(startup, 4, 4, 8);
      upstream.write(Buffer.concat([startup, body, head.subarray(length)]));
      client.pipe(upstream);
    };
    client.on('data', onStartup);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

forEachServer((server) => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase(server);
  });
  after(() => db?.drop());

  test("the URL's own startup options are kept, and cannot turn JIT or the planner rules back on", async () => {
    const url = new URL(db.url);
    url.searchParams.set('options', '-c jit=on -c enable_seqscan=on -c statement_timeout=4321');
    const store = await openPostgresStore({ url: url.toString() });
    try {
      // A session of the store's pool, as a page uses it.
      const pool = (store as unknown as { pool: pg.Pool }).pool;
      const { rows } = await pool.query<{ jit: string; seqscan: string; timeout: string }>(
        `SELECT current_setting('jit') AS jit, current_setting('enable_seqscan') AS seqscan, current_setting('statement_timeout') AS timeout`,
      );
      assert.deepEqual(rows[0], { jit: 'off', seqscan: 'off', timeout: '4321ms' });
    } finally {
      await store.close();
    }
    const writer = await PostgresWriter.open(url.toString(), {});
    await writer.close();
    const [writerSession] = await query<{ n: number }>(db.url, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'ledger-query writer' AND datname = current_database()`);
    assert.equal(writerSession?.n, 0, 'the writer closed its session');
  });

  test('a session that comes up without our startup options (a pooler dropped them) is refused, saying so', async () => {
    const target = new URL(db.url);
    const proxy = await optionsDroppingProxy(target);
    try {
      const through = new URL(db.url);
      through.port = String(proxy.port);
      const refused = /the PostgreSQL session runs with jit=on, not the jit=off ledger-query asked for .*a connection pooler/;
      await assert.rejects(openPostgresStore({ url: through.toString() }), refused);
      await assert.rejects(PostgresWriter.open(through.toString(), {}), refused);
    } finally {
      await proxy.close();
    }
  });
});

test('a server older than PostgreSQL 13 is refused in one line naming its version', async () => {
  // No build of PostgreSQL 12 is at hand to start: the answer of one, as its session would give it.
  const server12 = { query: async () => ({ rows: [{ num: '120022', version: '12.22', jit: 'off' }] }) } as unknown as pg.ClientBase;
  await assert.rejects(checkSession(server12), {
    message: 'PostgreSQL 12.22 is older than ledger-query supports: use PostgreSQL 13 or newer',
  });
  const server13 = { query: async () => ({ rows: [{ num: '130023', version: '13.23', jit: 'off' }] }) } as unknown as pg.ClientBase;
  await checkSession(server13);
});
