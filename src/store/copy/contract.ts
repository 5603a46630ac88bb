/**
 * What a copy (./copy-store.ts) needs of each backend: a copy source reads a
 * store at one block, a copy target builds a new store. Each backend
 * implements both in ../<backend>/copy-source.ts and copy-target.ts.
 */
import type { CommittedBlock } from '../store.js';
import type { NeutralRow, TablePlan, TableShape } from './neutral.js';

/** A store named on the command line: a postgres:// URL, else an embedded store's folder. */
export type CopyStore = { kind: 'postgres'; url: string } | { kind: 'embedded'; dataDir: string };

/** Rows of one table, a batch at a time. */
export type RowBatches = AsyncIterable<NeutralRow[]>;

/** The columns of a key to read rows in the order of, or 'stored': the order the backend keeps them in, the cheapest to read. */
export type ReadOrder = readonly string[] | 'stored';

/** Reads tables, each in the neutral form. */
export interface TableReader {
  /** Every table of the schema, discovered from it (the schema's own bookkeeping left out). */
  readonly tables: readonly TableShape[];
  /** `table`'s columns as given, in `order`. */
  rows(table: TableShape, order: ReadOrder): RowBatches;
  /** How many rows `table` holds. */
  count(table: TableShape): Promise<number>;
  /** What the backend's driver threw, as an error of the catalogue where it is one (a lost connection, a full disk). */
  fault(e: unknown): unknown;
}

/**
 * A store read at one block, however long the copy takes, while its writer
 * goes on: a read snapshot, never a lock that stops the writer.
 */
export interface CopySource extends TableReader {
  /** The last block of the snapshot: the block the copy holds; undefined for a store that holds none. */
  readonly block: CommittedBlock | undefined;
  close(): Promise<void>;
}

/**
 * A source that its target reads itself, through the target's own
 * connection, at one snapshot as any source: a table's rows go from one
 * file to the other inside the backend, never through JavaScript values.
 * Its rows are still read, once, for the check.
 */
export interface DirectSource extends CopySource {
  /** Copies the table `plan` names, every column of it, into the target. */
  copyTable(plan: TablePlan): Promise<void>;
  /**
   * Where the source can be read for the check on another thread, at the
   * same snapshot (proved, not assumed), while the target is read back on
   * this one: each table's check, as it comes. Undefined where it cannot;
   * the check then reads the source through rows().
   */
  readonly aside?: AsideChecks | undefined;
}

/** The source's checks, read on a thread of their own. */
export interface AsideChecks {
  /** Starts reading `tables` in that order; each table's check resolves once read. */
  start(tables: readonly { shape: TableShape; order: ReadOrder }[]): Map<string, Promise<{ rows: number; hash: string }>>;
  /** Stops the thread, done or not. */
  close(): Promise<void>;
}

/**
 * A new store being built: marked incomplete from before its first row until
 * complete() (every command refuses a marked store), its schema created by
 * the backend's own migrations.
 */
export interface CopyTarget {
  /** Every table of the schema just created, as TableReader.tables. */
  readonly tables: readonly TableShape[];
  /**
   * `from` read by the target itself where the backend can (the embedded
   * store attaching another embedded store's file), else undefined.
   */
  directFrom?(from: CopyStore): Promise<DirectSource | undefined>;
  /** Writes `table`'s rows, columns as `table` lists them. */
  load(table: TableShape, batches: RowBatches): Promise<void>;
  /**
   * After the last row: what is faster built once (indexes), and counters
   * that follow the rows (sequences). What runs beside the check (PostgreSQL's
   * index builds) may still run when it resolves; complete() waits for it.
   */
  finishLoad(): Promise<void>;
  /** Reads back what was written, to check it. */
  readonly reader: TableReader;
  /**
   * Where the rows written can be read back for the check on another thread
   * while finishLoad() runs on this one (an embedded store whose indexes are
   * built after its rows), that thread; else undefined, and the check reads
   * through `reader` after finishLoad(). Called once the last row is loaded;
   * the target closes the thread in complete() or abandon().
   */
  checkAside?(): Promise<AsideChecks | undefined>;
  /** Clears the mark, the last step, once what finishLoad started is done: the store is whole from here on. */
  complete(): Promise<void>;
  /** Leaves the target marked incomplete and lets go of it (a failed or stopped copy). */
  abandon(): Promise<void>;
}
