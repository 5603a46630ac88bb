/**
 * The writer's one PostgreSQL session: it migrates the schema, holds the
 * writer lock (./election.ts) and writes every group (./group-writer.ts). It
 * runs on the writer thread (./writer-thread.ts), whose event loop has
 * nothing else to do, so each reply of the server is acted on at once rather
 * than after whatever the ingest thread is busy with.
 */
import type pg from 'pg';
import type { CommittedBlock, StoredBlock } from '../store.js';
import type { WriteSession } from '../writer-protocol.js';
import { GroupWriter, prepareWriteSession, type EncodedGroup } from './group-writer.js';
import { checkSession, connect } from './connection.js';
import { WriterLease, type LeaseOptions } from './election.js';
import { migrate } from './schema.js';

/**
 * The session's calls come one at a time, in order (../writer-protocol.ts):
 * a write is several statements, and a read slipped in between would run
 * inside its transaction.
 */
export class PostgresWriteSession implements WriteSession<EncodedGroup> {
  private readonly groups: GroupWriter;

  private constructor(private readonly client: pg.Client, private readonly lease: WriterLease) {
    this.groups = new GroupWriter(client);
  }

  /**
   * Connects, migrates the schema and takes the writer lock on one session:
   * if this process dies, PostgreSQL ends the session, rolling back its open
   * transaction and freeing the lock at once.
   */
  static async open(url: string, options: LeaseOptions = {}): Promise<PostgresWriteSession> {
    const client = await connect(url, 'writer');
    // Until the lease watches the session, a failing connection must not crash the process.
    let failed: Error | undefined;
    const onError = (e: Error) => {
      failed ??= e;
    };
    client.on('error', onError);
    try {
      await checkSession(client);
      await migrate(client);
      let waited = false;
      const lease = await WriterLease.acquire(client, {
        ...options,
        onStandby: () => {
          waited = true;
          options.onStandby?.();
        },
      });
      // A standby may have waited through an upgrade: a newer schema is refused, not written to.
      if (waited) await migrate(client);
      await prepareWriteSession(client);
      client.off('error', onError);
      return new PostgresWriteSession(client, lease);
    } catch (e) {
      await client.end().catch(() => undefined);
      const aborted = options.signal?.aborted === true;
      throw failed !== undefined && !aborted ? failed : e;
    }
  }

  async lastBlock(): Promise<CommittedBlock | undefined> {
    this.lease.check();
    const { rows } = await this.client.query<{ height: string; time: bigint; chain_id: string; hash: string }>(
      'SELECT height::text AS height, time, chain_id, hash FROM last_block WHERE only_row = 1',
    );
    const row = rows[0];
    return row && { height: BigInt(row.height), time: BigInt(row.time), chainId: row.chain_id, hash: row.hash };
  }

  async storedBlocks(from: bigint, to: bigint): Promise<Map<bigint, StoredBlock>> {
    this.lease.check();
    const { rows } = await this.client.query<{ height: string; hash: string; digest: string }>(
      `SELECT height::text AS height, hash, digest FROM blocks WHERE height BETWEEN $1 AND $2 AND hash <> '' ORDER BY height`,
      [from.toString(), to.toString()],
    );
    return new Map(rows.map((r) => [BigInt(r.height), { hash: r.hash, digest: r.digest }]));
  }

  /** Writes a group in one transaction, checkpoint included. */
  async write(group: EncodedGroup): Promise<void> {
    this.lease.check();
    await this.groups.write(group);
  }

  /** Gives up the writer lock and ends the session. */
  async close(): Promise<void> {
    await this.lease.release().catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}
