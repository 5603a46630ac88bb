/**
 * A copy of a store into a new one, across backends or within one: every
 * table of the source's schema at one block (a read snapshot, taken while
 * the source serves and ingests), written into a target whose schema its
 * backend's own migrations created, then checked before it is called whole:
 * each table's row count and hash (./table-hash.ts) over the neutral form,
 * read back from the target, equal to the source's. Tables are read in the
 * order each side stores them (the check does not depend on it) but for kept
 * history, and hashed on a thread of their own. Where the target can read the
 * source itself (a direct source: one embedded store into another), it copies
 * each table inside its backend, and the rows are read once more, for the check.
 * Where the target builds its indexes after the rows on this thread (an
 * embedded store loaded row by row), a thread of its own reads them back meanwhile.
 */
import { AbortError, CopyMismatchError } from '../../errors.js';
import type { CommittedBlock } from '../store.js';
import type { AsideChecks, CopySource, CopyTarget, DirectSource, ReadOrder, RowBatches } from './contract.js';
import { KEPT_HISTORY, planTables, type NeutralRow, type TableShape } from './neutral.js';
import { openCopySource, openCopyTarget, type CopyStore } from './open-copy.js';
import { Pace } from './pace.js';
import { HashThread, type TableCheck, type TableHash } from './table-hash.js';

/** Where a copy is: loading rows (table by table), building what follows the rows, or checking. */
export interface CopyProgress {
  phase: 'rows' | 'finishing' | 'checking';
  /** The table being read, in the rows and checking phases. */
  table?: string | undefined;
  /** Rows done in the phase (rows: loaded; checking: read back), of totalRows. */
  rows: number;
  totalRows: number;
}

export interface CopyOptions {
  signal?: AbortSignal | undefined;
  /** At most this many rows a second in each phase (./pace.ts); the copy then reads every table in batches, never as a direct source. */
  maxRowsPerSecond?: number | undefined;
  onProgress?: ((p: CopyProgress) => void) | undefined;
}

export interface CopyResult {
  /** The block the copy holds; undefined for a store that held none. */
  block: CommittedBlock | undefined;
  tables: (TableCheck & { name: string })[];
  rows: number;
  /** Seconds each phase took. */
  seconds: { rows: number; finishing: number; checking: number };
}

export const describeStore = (s: CopyStore): string => (s.kind === 'postgres' ? s.url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@') : s.dataDir);

/**
 * Passes `batches` on, hashing each row and saying how far it got; stops
 * between batches once `signal` aborts. At a pace, in slices of its
 * `sliceRows` with a wait after each that got ahead: work in short bursts
 * leaves the source's server its cores more evenly than a batch at a time.
 */
async function* tapped(batches: RowBatches, hash: TableHash, onRows: (n: number) => void, signal: AbortSignal | undefined, pace: Pace | undefined): RowBatches {
  for await (const batch of batches) {
    const slice = pace?.sliceRows ?? batch.length;
    for (let at = 0; at < batch.length; at += slice) {
      if (signal?.aborted) throw new AbortError('stopped on request');
      const rows = slice >= batch.length ? batch : batch.slice(at, at + slice);
      for (const row of rows) hash.add(row);
      onRows(rows.length);
      await hash.ready();
      // The target may convert values in place: the hash has read them first.
      yield rows as NeutralRow[];
      await pace?.took(rows.length, signal);
    }
  }
}

/**
 * Kept history is read in key order on both sides, and its check streamed:
 * a PostgreSQL target routes its rows by height as they come, the embedded
 * store keeps it in that order anyway, and hashing it row by row would cost
 * more than PostgreSQL's reading it back in order. Every other table is read
 * in the order its side stores it in, and its check summed row by row.
 */
const readOrder = (table: TableShape): ReadOrder => (table.name === KEPT_HISTORY ? table.key : 'stored');

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

export async function copyStore(from: CopyStore, to: CopyStore, options: CopyOptions = {}): Promise<CopyResult> {
  const { signal } = options;
  // Opened first, and on its own, so that a missing or incomplete source is refused before the target is made.
  let source: CopySource = await openCopySource(from);
  let direct: DirectSource | undefined;
  let aside: AsideChecks | undefined;
  let target: CopyTarget | undefined;
  const hashing = new HashThread();
  let sourceOpen = true;
  const closeSource = async () => {
    if (sourceOpen) await source.close();
    sourceOpen = false;
  };
  try {
    if (signal?.aborted) throw new AbortError('stopped on request');
    target = await openCopyTarget(to, describeStore(from));
    const paceOf = () => (options.maxRowsPerSecond === undefined ? undefined : new Pace(options.maxRowsPerSecond));
    // A direct source copies each table in one statement, which nothing can pace.
    if (options.maxRowsPerSecond === undefined) direct = await target.directFrom?.(from);
    if (direct !== undefined) {
      // The target reads the source itself, at a snapshot of its own: the check must read that one.
      await closeSource();
      source = direct;
      sourceOpen = true;
      aside = direct.aside;
    }
    const plans = planTables(source.tables, target.tables);
    const counts = new Map<string, number>();
    for (const p of plans) counts.set(p.source.name, await source.count(p.source));
    const totalRows = [...counts.values()].reduce((a, b) => a + b, 0);
    const progress = (phase: CopyProgress['phase'], table: string | undefined, rows: number) =>
      options.onProgress?.({ phase, table, rows, totalRows });

    let started = process.hrtime.bigint();
    let done = 0;
    const sourceChecks = new Map<string, TableCheck | Promise<TableCheck>>();
    let pace = paceOf();
    // The source's checks read on their own thread, beside the target's read back, where they can be.
    const checkedAside = aside?.start(plans.map((p) => ({ shape: p.source, order: readOrder(p.source) })));
    for (const plan of plans) {
      const { source: s, target: t } = plan;
      progress('rows', s.name, done);
      if (checkedAside !== undefined) {
        if (signal?.aborted) throw new AbortError('stopped on request');
        await direct!.copyTable(plan);
        progress('rows', s.name, (done += counts.get(s.name)!));
        sourceChecks.set(s.name, checkedAside.get(s.name)!);
        continue;
      }
      const hash = hashing.table(readOrder(s) !== 'stored');
      const rows = tapped(source.rows(s, readOrder(s)), hash, (n) => progress('rows', s.name, (done += n)), signal, pace);
      if (direct === undefined) await target.load(t, rows);
      else {
        await direct.copyTable(plan);
        // What was copied is read once, for the check.
        for await (const batch of rows) void batch;
      }
      sourceChecks.set(s.name, await hash.finish());
    }
    // The snapshot is let go as soon as its rows are read: the source's WAL or VACUUM is held back no longer.
    await closeSource();
    const rowsSeconds = since(started);

    started = process.hrtime.bigint();
    progress('finishing', undefined, 0);
    // Unpaced, the target's rows may be read back on another thread while its indexes are built on this one.
    const targetAside = options.maxRowsPerSecond === undefined ? await target.checkAside?.() : undefined;
    const targetChecks = targetAside?.start(plans.map((p) => ({ shape: p.target, order: readOrder(p.source) })));
    await target.finishLoad();
    const finishingSeconds = since(started);

    started = process.hrtime.bigint();
    done = 0;
    pace = paceOf();
    const tables: CopyResult['tables'] = [];
    for (const { source: s, target: t } of plans) {
      progress('checking', s.name, done);
      let got: TableCheck;
      if (targetChecks !== undefined) {
        got = await untilStopped(targetChecks.get(t.name)!, signal);
        progress('checking', s.name, (done += got.rows));
      } else {
        const hash = hashing.table(readOrder(s) !== 'stored');
        for await (const rows of tapped(target.reader.rows(t, readOrder(s)), hash, (n) => progress('checking', s.name, (done += n)), signal, pace)) void rows;
        got = await hash.finish();
      }
      const want = await sourceChecks.get(s.name)!;
      if (got.rows !== want.rows || got.hash !== want.hash) {
        throw new CopyMismatchError(
          `the copy of table ${s.name} differs from its source (rows ${got.rows} against ${want.rows}, hash ${got.hash.slice(0, 16)} against ${want.hash.slice(0, 16)}): ${describeStore(to)} stays incomplete`,
        );
      }
      tables.push({ name: s.name, ...got });
    }
    const checkingSeconds = since(started);
    if (signal?.aborted) throw new AbortError('stopped on request');
    await target.complete();
    return {
      block: source.block, tables, rows: totalRows,
      seconds: { rows: rowsSeconds, finishing: finishingSeconds, checking: checkingSeconds },
    };
  } catch (e) {
    await target?.abandon().catch(() => undefined);
    throw faultOf(e, source, target, to);
  } finally {
    await closeSource().catch(() => undefined);
    await aside?.close();
    await hashing.close();
  }
}

/** `work`, or a stop on request as soon as `signal` aborts. */
function untilStopped<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(new AbortError('stopped on request'));
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new AbortError('stopped on request'));
    signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/** A driver's error as the catalogue's; a stop on request names the target left incomplete. */
function faultOf(e: unknown, source: CopySource, target: CopyTarget | undefined, to: CopyStore): unknown {
  if (e instanceof AbortError) {
    return new AbortError(target === undefined
      ? 'copy stopped on request before it wrote anything'
      : `copy stopped on request: ${describeStore(to)} is left incomplete (every command refuses it); run the same command again to start over`);
  }
  const known = source.fault(e);
  return target === undefined || known !== e ? known : target.reader.fault(e);
}
