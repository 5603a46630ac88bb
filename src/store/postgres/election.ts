/**
 * Electing the one instance that ingests: a session-level advisory lock
 * (LOCKS.writer), held by the writer's own connection for as long as it
 * lives. When that process dies, its connection closes and PostgreSQL drops
 * the lock (and rolls back an open transaction) at once; standbys poll for it
 * and the first to get it takes over from the stored checkpoint.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { checkAborted, WriterLeaseLostError, WriterLockHeldError } from '../../errors.js';
import { LOCKS } from './schema.js';

/** How often a standby asks for the lock: a standby takes over within this of the lock coming free. */
export const POLL_MS = 500;

/**
 * The writer's session settings that bound how long a lock outlives a writer
 * whose host vanished (no FIN, no RST): the server probes an idle connection
 * after 2 s, gives up after 2 unanswered probes 1 s apart, and drops a
 * connection whose sent data goes unacknowledged for 4 s. Without them the
 * lock would be held until the kernel's own timeouts, minutes to hours.
 * (Ignored on Unix sockets, where a host cannot vanish.)
 */
const KEEPALIVE_SETTINGS = [
  `SET tcp_keepalives_idle = 2`,
  `SET tcp_keepalives_interval = 1`,
  `SET tcp_keepalives_count = 2`,
  `SET tcp_user_timeout = 4000`,
];

export interface LeaseOptions {
  /** Wait for the lock instead of failing while another instance holds it. */
  wait?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /** Called once, when the lock is first found taken and the caller waits. */
  onStandby?: (() => void) | undefined;
  /** For tests: how often to ask for the lock. */
  pollMs?: number | undefined;
  /** For tests on this thread: how to wait between two asks (default: a timer of pollMs, cut short by signal). */
  pause?: ((ms: number, signal: AbortSignal | undefined) => Promise<void>) | undefined;
}

async function tryLock(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [LOCKS.writer]);
  return rows[0]?.locked === true;
}

/**
 * The writer lock, held by one session. It watches that session: once the
 * connection fails or ends, the lock is gone with it, and `check()` says so,
 * so a writer that lost its lease stops rather than writing on another's.
 */
export class WriterLease {
  private lostWith: WriterLeaseLostError | undefined;
  private released = false;

  private constructor(private readonly client: pg.Client) {
    client.on('error', (e: Error) => {
      this.lostWith ??= new WriterLeaseLostError(`the writer's database session failed, and its writer lock with it: ${e.message}`, { cause: e });
    });
    client.on('end', () => {
      if (!this.released) this.lostWith ??= new WriterLeaseLostError("the writer's database session ended, and its writer lock with it");
    });
  }

  /**
   * Takes the lock on `client`'s session. Without `wait`, throws
   * WriterLockHeldError if another session holds it; with it, asks again every
   * pollMs until it is free or `signal` aborts (throwing its reason).
   */
  static async acquire(client: pg.Client, options: LeaseOptions = {}): Promise<WriterLease> {
    const { wait = false, signal, onStandby, pollMs = POLL_MS, pause = (ms, s) => sleep(ms, undefined, { signal: s }) } = options;
    // Watch from the start: a session lost while waiting fails the next poll, not silently later.
    const lease = new WriterLease(client);
    // Best effort: a server too old for one of them (tcp_user_timeout came in 12) still elects.
    for (const setting of KEEPALIVE_SETTINGS) await client.query(setting).catch(() => undefined);
    let standby = false;
    for (;;) {
      checkAborted(signal, 'waiting for the writer lock');
      if (await tryLock(client)) return lease;
      if (!wait) {
        throw new WriterLockHeldError(
          'another ledger-query instance is writing to this database (it holds the writer lock); ' +
            'start this one as a standby, or read-only with --no-ingest',
        );
      }
      if (!standby) {
        standby = true;
        onStandby?.();
      }
      try {
        await pause(pollMs, signal);
      } catch (e) {
        checkAborted(signal, 'waiting for the writer lock');
        throw e;
      }
    }
  }

  /** Why the lease was lost, if it was. */
  get lost(): WriterLeaseLostError | undefined {
    return this.lostWith;
  }

  /** Throws if the session, and so the lock, is gone. */
  check(): void {
    if (this.lostWith) throw this.lostWith;
  }

  /** Gives the lock up, keeping the session (which may still be ending the lease's last work). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.lostWith) return;
    await this.client.query('SELECT pg_advisory_unlock($1)', [LOCKS.writer]);
  }
}
