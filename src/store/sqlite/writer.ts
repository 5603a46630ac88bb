/**
 * The embedded store's WriteStore: its SQLite connection lives on a thread of
 * its own (./writer-thread.ts). The caller's thread reads and decodes the
 * source and turns blocks into rows as they complete (GroupRows, ../rows.ts);
 * the writer thread only binds and commits them. While one group is being
 * committed the next is read, which takes ingestion from one core to two.
 */
import { ARCHIVE, type Retention } from '../../domain/retention.js';
import { transferables, type PackedGroup } from '../rows.js';
import type { WriterOptions } from '../store.js';
import { StoreWriter } from '../writer.js';

export type SqliteWriter = StoreWriter<PackedGroup>;

/** What the writer thread is started with. */
export interface SqliteWriterInput {
  path: string;
  retention: Retention;
}

export const SqliteWriter = {
  /** Starts the writer thread on the file at `path` (created or migrated); fails as opening it fails. */
  open(path: string, options: WriterOptions = {}): Promise<SqliteWriter> {
    const workerData: SqliteWriterInput = { path, retention: options.retention ?? ARCHIVE };
    return StoreWriter.open<PackedGroup>({
      name: 'SQLite',
      module: new URL('./writer-thread.js', import.meta.url),
      workerData,
      pack: (rows) => {
        const group = rows.finish();
        return group && { group, transfer: transferables(group) };
      },
    }, options);
  },
};
