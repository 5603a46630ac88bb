/** What a copy between embedded stores (./copy-attached.ts) and its source's check thread (./copy-check-thread.ts) say to each other. */
import type { WireError } from '../../errors.js';
import type { ReadOrder } from '../copy/contract.js';
import type { TableShape } from '../copy/neutral.js';

export type CheckRequest =
  /** (Again) begin a read snapshot of the source: its first read. */
  | { kind: 'begin' }
  /** Hash these tables of the snapshot, in this order. */
  | { kind: 'hash'; tables: { shape: TableShape; order: ReadOrder }[] };

export type CheckReply =
  | { kind: 'begun' }
  | { kind: 'checked'; table: string; rows: number; hash: string }
  | { kind: 'failed'; error: WireError };
