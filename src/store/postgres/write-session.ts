/**
 * The writer's one PostgreSQL session: it migrates the schema, holds the
 * writer lock (./election.ts) and writes every group (./group-writer.ts). It
 * runs on the writer thread (./writer-thread.ts), whose event loop has
 * nothing else to do, so each reply of the server is acted on at once rather
 * than after whatever the ingest thread is busy with.
 */
import type pg from 'pg';
import { ARCHIVE, retentionText, type Retention } from '../../domain/retention.js';
import type { PruneStep } from '../prune-turns.js';
import { prunedBeforeNotice } from '../retention-notice.js';
import type { CommittedBlock, StoredBlock } from '../store.js';
import type { WriteSession } from '../writer-protocol.js';
import { GroupWriter, prepareWriteSession, type BinaryGroup } from './group-writer.js';
import { checkSession, connect } from './connection.js';
import { WriterLease, type LeaseOptions } from './election.js';
import { blocksPerSecond, partitionSpan, WriterPartitions } from './partitions.js';
import { PostgresPruner } from './pruner.js';
import { migrate } from './schema.js';
import { WriterVacuum } from './vacuum.js';

export interface WriteSessionOptions extends LeaseOptions {
  retention?: Retention | undefined;
  /** Hears what an operator should know: a store pruned with a shorter window, a migration's progress. */
  notice?: ((message: string) => void) | undefined;
}

/**
 * The session's calls come one at a time, in order (../writer-protocol.ts):
 * a write is several statements, and a read slipped in between would run
 * inside its transaction.
 */
export class PostgresWriteSession implements WriteSession<BinaryGroup> {
  private readonly groups: GroupWriter;
  readonly prune: PruneStep | undefined;
  private readonly vacuum: WriterVacuum | undefined;

  private constructor(
    private readonly client: pg.Client, private readonly lease: WriterLease, retention: Retention, url: string,
    notice: ((message: string) => void) | undefined,
  ) {
    const partitions = new WriterPartitions(async (c) => partitionSpan(retention, await blocksPerSecond(c)));
    this.groups = new GroupWriter(client, partitions);
    if (retention.kind === 'window') {
      const vacuum = (this.vacuum = new WriterVacuum(url, notice));
      this.prune = new PostgresPruner(client, retention.ns, partitions, () => lease.check(), (n) => vacuum.dead(n)).step;
    }
  }

  /**
   * Connects, migrates the schema and takes the writer lock on one session:
   * if this process dies, PostgreSQL ends the session, rolling back its open
   * transaction and freeing the lock at once.
   */
  static async open(url: string, options: WriteSessionOptions = {}): Promise<PostgresWriteSession> {
    const retention = options.retention ?? ARCHIVE;
    const client = await connect(url, 'writer');
    // Until the lease watches the session, a failing connection must not crash the process.
    let failed: Error | undefined;
    const onError = (e: Error) => {
      failed ??= e;
    };
    client.on('error', onError);
    try {
      await checkSession(client);
      await migrate(client, options.notice);
      let waited = false;
      const lease = await WriterLease.acquire(client, {
        ...options,
        onStandby: () => {
          waited = true;
          options.onStandby?.();
        },
      });
      // A standby may have waited through an upgrade: a newer schema is refused, not written to.
      if (waited) await migrate(client, options.notice);
      await prepareWriteSession(client);
      const { rows } = await client.query<{ window_ns: bigint | null }>(
        'UPDATE retention SET setting = $1 WHERE only_row = 1 RETURNING window_ns', [retentionText(retention)],
      );
      const said = prunedBeforeNotice(rows[0]?.window_ns ?? undefined, retention);
      if (said !== undefined) options.notice?.(said);
      client.off('error', onError);
      return new PostgresWriteSession(client, lease, retention, url, options.notice);
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

  /** Writes a group in one transaction, checkpoint included; first waits for the writer's vacuum if it is far behind (./vacuum.ts). */
  async write(group: BinaryGroup): Promise<void> {
    await this.vacuum?.keepUp();
    this.lease.check();
    const updated = await this.groups.write(group);
    this.vacuum?.dead(updated);
  }

  /** Gives up the writer lock and ends the session. */
  async close(): Promise<void> {
    await this.vacuum?.close(this.client);
    await this.lease.release().catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}
