/**
 * A PostgreSQL store as a copy's source: one session in one REPEATABLE READ,
 * READ ONLY transaction, a snapshot that the writer's commits do not change
 * and that takes no lock a writer or reader waits for. What it costs the
 * store: VACUUM cannot remove row versions newer than the snapshot's start
 * while the copy reads (the tables a busy writer updates, orders_current
 * above all, bloat meanwhile), and the session holds one connection.
 */
import type pg from 'pg';
import type { CopySource } from '../copy/contract.js';
import { checkSession, connect } from './connection.js';
import { postgresTableReader } from './copy-tables.js';
import { fromPostgres } from './errors.js';
import { checkSchema } from './schema.js';

export async function openPostgresCopySource(url: string): Promise<CopySource> {
  let client: pg.Client | undefined;
  try {
    client = await connect(url, 'copy source');
    const session = client;
    // A lost connection fails the statement in flight; unhandled, the error event would end the process.
    session.on('error', () => {});
    await checkSession(session);
    await checkSchema(session);
    // However long the copy reads, the server must not cut it short.
    await session.query("SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0");
    await session.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // The snapshot is taken by the transaction's first statement: the last block, which it then holds.
    const { rows } = await session.query<{ height: string; time: bigint; chain_id: string; hash: string }>(
      'SELECT height::text AS height, time, chain_id, hash FROM last_block WHERE only_row = 1',
    );
    const row = rows[0];
    const reader = await postgresTableReader(session, url);
    return {
      ...reader,
      block: row && { height: BigInt(row.height), time: BigInt(row.time), chainId: row.chain_id, hash: row.hash },
      // Ended, not committed: a read-only snapshot has nothing to keep, and a COPY cut off midway would hold a COMMIT queued behind it.
      close: () => session.end().catch(() => undefined),
    };
  } catch (e) {
    await client?.end().catch(() => undefined);
    throw fromPostgres(e, url);
  }
}
