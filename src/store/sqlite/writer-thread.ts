/** The writer thread of ./writer.ts: holds the write connection and serves the writer's calls. */
import { workerData } from 'node:worker_threads';
import type { PreparedGroup } from '../rows.js';
import { runWriterThread } from '../writer-protocol.js';
import { SqliteWriteSession } from './write-session.js';

runWriterThread<PreparedGroup>(async () => SqliteWriteSession.open((workerData as { path: string }).path));
