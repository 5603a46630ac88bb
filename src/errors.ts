/**
 * Every error ledger-query raises on purpose, in one catalogue: a class per
 * kind, each with a stable code, the exit status of a command it ends, and
 * whether trying again later may succeed. An error crosses threads and
 * processes as its code and message (toWire) and is rebuilt from here
 * (fromWire), so its class survives the trip. The README's table of exit
 * statuses and errors lists every code; test/errors.test.ts holds them to it.
 * The HTTP API's refusals are the other part of the catalogue
 * (./api/errors.ts): subclasses of LedgerError too, with the gRPC code and
 * data node detail of their envelope; they never cross a thread.
 */

export abstract class LedgerError extends Error {
  /** Stable, for logs, scripts and the wire: `LQ_` and the kind. */
  static readonly code: string;
  /** The exit status of a command this error ends. */
  static readonly exit: number = 1;
  /** Whether the same thing may succeed later, unchanged (a lock freed, a server back). */
  static readonly retryable: boolean = false;

  readonly code: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    const kind = new.target as unknown as typeof LedgerError;
    this.name = kind.name;
    this.code = kind.code;
  }

  get exitStatus(): number {
    return (this.constructor as typeof LedgerError).exit;
  }

  get retryable(): boolean {
    return (this.constructor as typeof LedgerError).retryable;
  }
}

/** The base class of one kind: its code, exit status and retryability, as statics. */
function kind<C extends string>(code: C, options: { exit?: number; retryable?: boolean } = {}) {
  return class extends LedgerError {
    static override readonly code: C = code;
    static override readonly exit: number = options.exit ?? 1;
    static override readonly retryable: boolean = options.retryable ?? false;
  };
}

// ---------------------------------------------------------------- commands and configuration

/** The command line is not one the command takes: an unknown flag, a bad value, a bad --source. */
export class UsageError extends kind('LQ_USAGE', { exit: 2 }) {}

/** The Node.js running the command is older than it needs (78: EX_CONFIG, the machine's set-up). */
export class NodeVersionError extends kind('LQ_NODE_VERSION', { exit: 78 }) {}

// ---------------------------------------------------------------- the store

/** No store where one must already be: a folder without ledger.db, a database without our schema. */
export class StoreNotFoundError extends kind('LQ_STORE_NOT_FOUND') {}

/** A store file that is not a SQLite database, or is damaged (SQLite's NOTADB, CORRUPT). */
export class StoreCorruptError extends kind('LQ_STORE_CORRUPT') {}

/** The store's schema is not the version this ledger-query works with. */
export class SchemaVersionError extends kind('LQ_SCHEMA_VERSION') {}

/** A stored row that a migration cannot convert; nothing of the migration is kept. */
export class MigrationError extends kind('LQ_MIGRATION') {}

/**
 * A store a copy was building when it was cut short (Ctrl-C, kill -9, a full
 * disk, a lost connection), or whose check failed: it may hold part of the
 * data, so nothing serves or writes it. Running the copy again starts over.
 */
export class StoreIncompleteError extends kind('LQ_STORE_INCOMPLETE', { exit: 66 }) {}

/** A copy's target that is not empty or absent: a folder with a store, a database with our tables. Nothing was changed. */
export class StoreNotEmptyError extends kind('LQ_STORE_NOT_EMPTY') {}

/** A copy's check found a table whose row count or hash differs between source and target; the target stays incomplete. */
export class CopyMismatchError extends kind('LQ_COPY_MISMATCH', { exit: 65 }) {}

/** Another instance holds the writer lock of this database. */
export class WriterLockHeldError extends kind('LQ_WRITER_LOCK_HELD', { retryable: true }) {}

/** The writer's database session ended, and its writer lock with it: it must not write on. */
export class WriterLeaseLostError extends kind('LQ_WRITER_LEASE_LOST', { retryable: true }) {}

/** A write handed over while an earlier one was outstanding, which failed: its blocks would follow blocks not stored. */
export class EarlierWriteFailedError extends kind('LQ_EARLIER_WRITE_FAILED') {}

/** A block not newer than the last stored block. */
export class BlockOrderError extends kind('LQ_BLOCK_ORDER') {}

/** The writer was closed, or its thread ended, before the call. */
export class WriterClosedError extends kind('LQ_WRITER_CLOSED') {}

/** PostgreSQL refused a statement; the message is the server's, with what to do where we know. */
export class DatabaseError extends kind('LQ_DATABASE') {}

/** The database server cannot be reached (refused, unknown host, timed out, authentication failed). */
export class DatabaseUnreachableError extends kind('LQ_DATABASE_UNREACHABLE', { retryable: true }) {}

/** A query that ran past its time limit (serve --query-timeout) and was cancelled, or waited that long for a connection. */
export class QueryTimeoutError extends kind('LQ_QUERY_TIMEOUT', { retryable: true }) {}

/** A database server we do not support: too old, or one that runs our sessions without their settings. */
export class UnsupportedDatabaseError extends kind('LQ_DATABASE_UNSUPPORTED') {}

// ---------------------------------------------------------------- ingestion

/**
 * Bytes that are not the events they claim to be: an impossible record size,
 * a sequence number out of order, an event that does not decode, blocks out
 * of sequence. `offset` is where in its source, once a source knows it.
 */
export class CorruptInputError extends kind('LQ_CORRUPT_INPUT') {
  readonly offset: number | undefined;

  constructor(message: string, options?: ErrorOptions & { offset?: number | undefined }) {
    super(message, options);
    this.offset = options?.offset;
  }

  /** The same error, placed at `offset` of its source. */
  at(offset: number): CorruptInputError {
    return new CorruptInputError(this.message, { offset, cause: this });
  }
}

/** Where in a source an event came from, for messages an operator can act on. */
export interface SourcePosition {
  /** e.g. "file:///data/events.bin", "socket://0.0.0.0:3005", "ndjson:-" */
  source: string;
  /** Byte offset of the record (files, NDJSON) or message number (socket). */
  offset: number;
  /** What `offset` counts. */
  unit?: 'byte' | 'uncompressed byte' | 'message' | undefined;
}

/**
 * Ingestion stopped. Every block before the one that was open is stored;
 * nothing of that one.
 */
export class IngestError extends kind('LQ_INGEST_STOPPED') {
  readonly position: SourcePosition | undefined;
  /** The block being assembled when it stopped, if one was open. */
  readonly blockHeight: bigint | undefined;

  constructor(message: string, options?: ErrorOptions & { position?: SourcePosition; blockHeight?: bigint | undefined }) {
    super(message, options);
    this.position = options?.position;
    this.blockHeight = options?.blockHeight;
  }

  /** Ingestion stopped for `reason` at `position`, inside block `blockHeight` if one was open. */
  static at(reason: string, position: SourcePosition, blockHeight: bigint | undefined): IngestError {
    const at = position.unit === 'message' ? `message ${position.offset}` : `${position.unit ?? 'byte'} offset ${position.offset}`;
    const block = blockHeight === undefined ? 'outside any block' : `in block ${blockHeight}`;
    return new IngestError(`${position.source}: ${at}, ${block}: ${reason}`, { position, blockHeight });
  }
}

/**
 * Blocks read again hold other events than the store holds for the same
 * heights and hashes: the store or the source is corrupt. Its own exit
 * status, sysexits' EX_DATAERR, so that a script can tell it from a fault
 * that passes.
 */
export class StoredBlockMismatchError extends kind('LQ_STORED_BLOCK_MISMATCH', { exit: 65 }) {}

// ---------------------------------------------------------------- processes

/** An address (the HTTP port, a socket source) cannot be listened on. */
export class ListenError extends kind('LQ_LISTEN') {}

/** An HTTP process of `serve --workers N` exited before it listened. */
export class HttpProcessError extends kind('LQ_HTTP_PROCESS') {}

/** The operating system refused: a file that cannot be read, a port that cannot be bound. */
export class SystemError extends kind('LQ_SYSTEM') {}

/** Stopped on request (a signal, a standby told to stop), not by a fault. */
export class AbortError extends kind('LQ_ABORTED', { exit: 130 }) {}

/** An invariant of ledger-query does not hold: a bug, to report with the message. */
export class InternalError extends kind('LQ_INTERNAL', { exit: 70 }) {}

type Kind = (new (message: string, options?: ErrorOptions) => LedgerError) & Pick<typeof LedgerError, 'code' | 'exit' | 'retryable'>;

/** The errors of commands, the store and ingestion, by code; the API's refusals are in ./api/refusals.ts. */
export const ERROR_KINDS: readonly Kind[] = [
  UsageError, NodeVersionError, StoreNotFoundError, StoreCorruptError, StoreIncompleteError, StoreNotEmptyError, CopyMismatchError, SchemaVersionError, MigrationError, WriterLockHeldError, WriterLeaseLostError,
  EarlierWriteFailedError, BlockOrderError, WriterClosedError, DatabaseError, DatabaseUnreachableError,
  QueryTimeoutError, UnsupportedDatabaseError, CorruptInputError, IngestError, StoredBlockMismatchError, ListenError,
  HttpProcessError, SystemError, AbortError, InternalError,
];

const byCode = new Map(ERROR_KINDS.map((k) => [k.code, k]));

/** Throws AbortError if `signal` is aborted; `what` names what was stopped. */
export function checkAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new AbortError(`${what}: stopped on request`);
}

/** An error as it crosses a thread or process: the catalogue rebuilds its class from the code. */
export interface WireError {
  code: string;
  message: string;
}

/** Anything thrown, for the wire: an error of the catalogue as it is, anything else as an internal error. */
export function toWire(e: unknown): WireError {
  const known = asLedgerError(e);
  return { code: known.code, message: known.message };
}

/** The error of the catalogue a WireError stands for. */
export function fromWire(w: WireError): LedgerError {
  return new (byCode.get(w.code) ?? InternalError)(w.message);
}

/**
 * Anything thrown, as an error of the catalogue: an error of the operating
 * system (it carries an E... code) as SystemError, anything else unexpected
 * as InternalError, its cause kept.
 */
export function asLedgerError(e: unknown): LedgerError {
  if (e instanceof LedgerError) return e;
  if (!(e instanceof Error)) return new InternalError(String(e));
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return new SystemError(e.message, { cause: e });
  return new InternalError(e.message, { cause: e });
}
