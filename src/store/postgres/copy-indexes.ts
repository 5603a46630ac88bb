/**
 * A PostgreSQL copy target's indexes (./copy-target.ts), built after its
 * rows are committed, on sessions of their own, while the copy reads the
 * rows back for its check on the target's session. One build at a time ran
 * a single process through most of each build's last phase (writing the
 * index out), leaving a core of two idle (BENCHMARKS.md, "Indexes built
 * beside the check"). The database keeps its mark until the copy completes:
 * a copy cut short leaves it refused, and the next starts over.
 */
import { cancelStatement, connect, connectCancellable, type CancellableSession } from './connection.js';

/** Sessions building indexes at once: as many as the cores of the machine this was measured on. */
export const BUILD_SESSIONS = 2;

export interface IndexBuild {
  /** The index's definition (pg_get_indexdef). */
  sql: string;
  /** Its table's bytes: the longest builds start first. */
  bytes: number;
}

export interface IndexBuilds {
  /** Resolves once every index is built; rejects with the first failure. */
  readonly done: Promise<void>;
  /** Cancels the builds under way (through a session of its own: the target's may be busy) and ends their sessions. */
  cancel(): Promise<void>;
}

/** Starts building `indexes` on `sessions` sessions of `url`, each with `settings` (SET statements). */
export function buildIndexes(url: string, indexes: readonly IndexBuild[], settings: string, sessions = BUILD_SESSIONS): IndexBuilds {
  const queue = [...indexes].sort((a, b) => b.bytes - a.bytes);
  const open: CancellableSession[] = [];
  let failed = false;
  const worker = async () => {
    const session = await connectCancellable(url, 'copy target indexes');
    const { client } = session;
    open.push(session);
    try {
      await client.query(settings);
      for (let next = queue.shift(); next !== undefined && !failed; next = queue.shift()) await client.query(next.sql);
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      open.splice(open.indexOf(session), 1);
      await client.end().catch(() => undefined);
    }
  };
  const done = Promise.all(Array.from({ length: Math.min(sessions, queue.length) }, worker)).then(() => undefined);
  // Awaited by complete() or cancel(); a failure before then must not end the process.
  done.catch(() => undefined);
  return {
    done,
    async cancel() {
      failed = true;
      if (open.length > 0) {
        const client = await connect(url, 'copy target cancel').catch(() => undefined);
        if (client !== undefined) for (const session of open) await cancelStatement(client, session);
        await client?.end().catch(() => undefined);
      }
      await done.catch(() => undefined);
    },
  };
}
