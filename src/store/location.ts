/**
 * Where an embedded store lives: no I/O and no driver, so that the
 * settings (../config/) can name its folder without loading a driver.
 */
import { join } from 'node:path';

export const DEFAULT_DATA_DIR = './data';

/** The embedded store's file in its folder. */
export const databasePath = (dataDir: string) => join(dataDir, 'ledger.db');
