/**
 * What ./writer.ts and its thread (./writer-thread.ts) say to each other. A
 * module of its own, free of side effects: the thread's module starts serving
 * when loaded in any worker thread, so the writer must not import it.
 */
import type { ThreadError, ThreadReply } from '../thread-calls.js';
import type { EncodedGroup } from './block-writer.js';

export interface WriterThreadInput {
  url: string;
  wait: boolean;
  pollMs: number | undefined;
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
  | ThreadReply;
