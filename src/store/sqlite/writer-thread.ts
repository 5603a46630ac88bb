/** The writer thread of ./writer.ts: holds the write connection and serves the writer's calls. */
import { workerData } from 'node:worker_threads';
import type { PackedGroup } from '../rows.js';
import { runWriterThread } from '../writer-protocol.js';
import { SqliteWriteSession } from './write-session.js';
import type { SqliteWriterInput } from './writer.js';

const input = workerData as SqliteWriterInput;
runWriterThread<PackedGroup>(async ({ notice }) => SqliteWriteSession.open(input.path, input.retention, notice));
