/**
 * What ./writer.ts and its thread (./writer-thread.ts) say to each other. A
 * module of its own, free of side effects: the thread's module starts serving
 * when loaded in any worker thread, so the writer must not import it.
 */
import { SchemaVersionError } from '../store.js';
import type { EncodedGroup } from './block-writer.js';

export interface WriterThreadInput {
  url: string;
  wait: boolean;
  pollMs: number | undefined;
}

/** An error as it crosses threads: its class is lost on the way, so its name says which it was. */
export interface ThreadError {
  name: string;
  message: string;
}

export type WriterRequest =
  | { type: 'abort' }
  | { id: number; type: 'lastBlock' }
  | { id: number; type: 'blockHashes'; from: bigint; to: bigint }
  /** `error`: the batch could not be encoded; it still takes its turn, and fails. */
  | { id: number; type: 'write'; group: EncodedGroup | undefined; error?: ThreadError }
  | { id: number; type: 'close' };

export type WriterReply =
  | { type: 'standby' }
  | { type: 'opened' }
  | { type: 'openFailed'; error: ThreadError }
  | { type: 'reply'; id: number; value?: unknown; error?: ThreadError };

export function threadError(e: unknown): ThreadError {
  // A SchemaVersionError is named 'Error': its class is the only sign of it.
  if (e instanceof SchemaVersionError) return { name: 'SchemaVersionError', message: e.message };
  return e instanceof Error ? { name: e.name, message: e.message } : { name: 'Error', message: String(e) };
}
