/**
 * The two copies of the WAL-index header at the start of a WAL database's
 * -shm file (sqlite.org/walformat.html), which every commit rewrites (its
 * frame count, change counter and checksums) before any reader can see it:
 * equal headers read at two moments mean that no commit became visible
 * between them. The block watch (./reader.ts) and a copy's two snapshots
 * (./copy-check-aside.ts) read them.
 */
import { openSync, readSync } from 'node:fs';

export const WAL_INDEX_HEADERS_BYTES = 96;

/** The -shm file of the database at `path`, open for reading; null if there is none. */
export function openShm(path: string): number | null {
  try {
    return openSync(`${path}-shm`, 'r');
  } catch {
    return null;
  }
}

/** Reads the headers from the open -shm file `shm` into `into` (WAL_INDEX_HEADERS_BYTES long); false if the file is shorter. */
export function readWalIndexHeaders(shm: number, into: Buffer): boolean {
  return readSync(shm, into, 0, WAL_INDEX_HEADERS_BYTES, 0) === WAL_INDEX_HEADERS_BYTES;
}
