/**
 * The embedded store's incomplete mark: a copy builds the new store's file
 * under a name of its own beside where ledger.db goes, and renames it into
 * place only once its check passed (./copy/). While that file is
 * there, a copy is in progress or was cut short, and every command refuses
 * the folder. No driver: ./open.ts and serve check it before opening anything.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StoreIncompleteError } from '../errors.js';

/** The file a copy builds, and the mark that the folder's store is incomplete. */
export const copyInProgressPath = (dataDir: string) => join(dataDir, 'ledger.db.copy-in-progress');

/** What every command says of an incomplete store, `where` naming it. */
export function incompleteError(where: string): StoreIncompleteError {
  return new StoreIncompleteError(
    `${where} is an incomplete copy (a copy was cut short, or its check failed): nothing serves or writes it; run the same ledger-query copy again, which starts over`,
  );
}

/** Refuses a folder that holds an incomplete copy. */
export function refuseIncompleteEmbedded(dataDir: string): void {
  if (existsSync(copyInProgressPath(dataDir))) throw incompleteError(`the store in ${dataDir}`);
}
