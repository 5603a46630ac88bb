/**
 * The WriteStore of PostgreSQL. The thread that reads and decodes the source
 * turns each group into COPY data here (./group-writer.ts), while the
 * previous group commits; a thread of its own (./writer-thread.ts) holds the
 * writer's one session, with the writer lock, and sends each group to the
 * server. PostgreSQL does the rest on its own processes.
 */
import { ARCHIVE, type Retention } from '../../domain/retention.js';
import type { WriterOptions } from '../store.js';
import { StoreWriter } from '../writer.js';
import { encodeGroup, encodedTransferables, type EncodedGroup } from './group-writer.js';

export interface PostgresWriterOptions extends WriterOptions {
  /** For tests: how often a standby asks for the writer lock (ms). */
  pollMs?: number;
}

/** What the writer thread is started with. */
export interface PostgresWriterInput {
  url: string;
  wait: boolean;
  pollMs: number | undefined;
  retention: Retention;
}

export type PostgresWriter = StoreWriter<EncodedGroup>;

export const PostgresWriter = {
  /**
   * Connects a session of its own, migrates the schema and takes the writer
   * lock on that session, so that if this process dies PostgreSQL rolls back
   * its open transaction and frees the lock at once. Without `wait`, fails if
   * another instance holds the lock; with it, waits as a standby (calling
   * onStandby once) until the lock frees or `signal` aborts.
   */
  open(url: string, options: PostgresWriterOptions = {}): Promise<PostgresWriter> {
    const workerData: PostgresWriterInput = { url, wait: options.wait ?? false, pollMs: options.pollMs, retention: options.retention ?? ARCHIVE };
    return StoreWriter.open<EncodedGroup>({
      name: 'PostgreSQL',
      module: new URL('./writer-thread.js', import.meta.url),
      workerData,
      // Encoded here, on the ingesting thread, while the previous group commits.
      pack: (rows) => {
        const packed = rows.finish();
        const group = packed && encodeGroup(packed);
        return group && { group, transfer: encodedTransferables(group) };
      },
    }, options);
  },
};
