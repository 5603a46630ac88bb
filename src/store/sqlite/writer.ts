/**
 * The embedded store's WriteStore: its SQLite connection lives on a thread of
 * its own (./writer-thread.ts). The caller's thread reads and decodes the
 * source and turns blocks into rows as they complete (GroupRows, ../rows.ts);
 * the writer thread only binds and commits them. While one group is being
 * committed the next is read, which takes ingestion from one core to two.
 */
import { transferables, type PackedGroup } from '../rows.js';
import { StoreWriter } from '../writer.js';

export type SqliteWriter = StoreWriter<PackedGroup>;

export const SqliteWriter = {
  /** Starts the writer thread on the file at `path` (created or migrated); fails as opening it fails. */
  open(path: string): Promise<SqliteWriter> {
    return StoreWriter.open<PackedGroup>({
      name: 'SQLite',
      module: new URL('./writer-thread.js', import.meta.url),
      workerData: { path },
      pack: (rows) => {
        const group = rows.finish();
        return group && { group, transfer: transferables(group) };
      },
    });
  },
};
