/**
 * The writer's one PostgreSQL session: it migrates the schema, holds the
 * writer lock (./election.ts) and writes every group (./block-writer.ts). It
 * runs on the writer thread (./writer-thread.ts), whose event loop has
 * nothing else to do, so each reply of the server is acted on at once rather
 * than after whatever the ingest thread is busy with.
 */
import type pg from 'pg';
import type { CommittedBlock } from '../store.js';
import { GroupWriter, prepareWriterSession, type EncodedGroup } from './block-writer.js';
import { checkSession, connect } from './connection.js';
import { WriterLease, type LeaseOptions } from './election.js';
import { migrate } from './schema.js';

/** Runs tasks one at a time, in the order given, whatever each one's outcome. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Settles once every task given so far has. */
  idle(): Promise<unknown> {
    return this.tail;
  }
}

export class WriterSession {
  /**
   * Everything on the session runs through here: a write is several
   * statements, and a read slipped in between would run inside its transaction.
   */
  private readonly serial = new Serial();
  /** The last write() call, while it is outstanding: the next call depends on its outcome. */
  private outstanding: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  private readonly groups: GroupWriter;

  private constructor(private readonly client: pg.Client, private readonly lease: WriterLease) {
    this.groups = new GroupWriter(client);
  }

  /**
   * Connects, migrates the schema and takes the writer lock on one session:
   * if this process dies, PostgreSQL ends the session, rolling back its open
   * transaction and freeing the lock at once.
   */
  static async open(url: string, options: LeaseOptions = {}): Promise<WriterSession> {
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
      await prepareWriterSession(client);
      client.off('error', onError);
      return new WriterSession(client, lease);
    } catch (e) {
      await client.end().catch(() => undefined);
      const aborted = options.signal?.aborted === true;
      throw failed !== undefined && !aborted ? failed : e;
    }
  }

  lastBlock(): Promise<CommittedBlock | undefined> {
    return this.serial.run(async () => {
      this.lease.check();
      const { rows } = await this.client.query<{ height: string; time: bigint; chain_id: string; hash: string }>(
        'SELECT height::text AS height, time, chain_id, hash FROM last_block',
      );
      const row = rows[0];
      return row && { height: BigInt(row.height), time: BigInt(row.time), chainId: row.chain_id, hash: row.hash };
    });
  }

  blockHashes(from: bigint, to: bigint): Promise<Map<bigint, string>> {
    return this.serial.run(async () => {
      this.lease.check();
      const { rows } = await this.client.query<{ height: string; hash: string }>(
        `SELECT height::text AS height, hash FROM blocks WHERE height BETWEEN $1 AND $2 AND hash <> '' ORDER BY height`,
        [from.toString(), to.toString()],
      );
      return new Map(rows.map((r) => [BigInt(r.height), r.hash]));
    });
  }

  /**
   * Writes a group after every earlier call. If a call still outstanding when
   * this one is made fails, this one fails without writing: its blocks follow
   * blocks that were not stored. (A call made after a failure was reported is
   * written as usual.) `group` is undefined for a batch without blocks, or an
   * error if the batch could not be encoded: either still takes its turn.
   */
  write(group: EncodedGroup | Error | undefined): Promise<void> {
    if (this.closing) return Promise.reject(new Error('the PostgreSQL writer is closed'));
    const before = this.outstanding;
    const done = this.serial.run(async () => {
      await before?.catch((e: unknown) => {
        throw new Error(`not written: an earlier group failed (${e instanceof Error ? e.message : String(e)})`, { cause: e });
      });
      if (group instanceof Error) throw group;
      this.lease.check();
      if (group !== undefined) await this.groups.write(group);
    });
    this.outstanding = done;
    const settled = () => {
      if (this.outstanding === done) this.outstanding = undefined;
    };
    done.then(settled, settled);
    return done;
  }

  /** Waits for outstanding writes, gives up the writer lock and ends the session. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.serial.idle();
      await this.lease.release().catch(() => undefined);
      await this.client.end().catch(() => undefined);
    })();
    return this.closing;
  }
}
