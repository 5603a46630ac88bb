/**
 * The uncompressed bytes of a gzip event file, of verified members only.
 *
 * A gzip member's check (the CRC-32 and length of its data) is at its end,
 * and a member may hold every block of a file: decompressing and storing as
 * we go would store blocks of a member that then fails its check. So the
 * compressed bytes are read twice: first every member is checked
 * (./gzip-members.ts) without keeping anything, then the members that passed
 * are decompressed again and handed on. A regular file is read twice through
 * one descriptor; a pipe or FIFO, which cannot be read twice, is spooled to a
 * temporary file as it is checked (as many bytes as it carries compressed).
 * The cost of the first pass: BENCHMARKS.md, "Only verified bytes are stored".
 */
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants as zlib, createGunzip } from 'node:zlib';
import { CorruptInputError } from '../errors.js';
import { checkGzipMembers, verifiedEnd, type GzipCheck, type GzipFault } from './gzip-members.js';

export interface VerifiedGzipOptions {
  /**
   * A stream cut short inside a member (its check is missing) also hands on
   * what can be decompressed of that member, unverified; without it, nothing
   * of that member is, and the source fails saying it is cut. A member that
   * fails its check is never handed on.
   */
  acceptUnverified?: boolean | undefined;
  /** Stops reading: the source then ends quietly, neither cut nor failed. */
  signal?: AbortSignal | undefined;
}

const CHUNK_BYTES = 1 << 20;
/** zlib's output chunks: fewer, larger ones mean fewer splitter joins. */
const GUNZIP_CHUNK_BYTES = 1 << 16;

/** A regular gzip file: its members checked, then the verified ones read again through the same descriptor. */
export async function* verifiedGzipFile(fh: FileHandle, opts: VerifiedGzipOptions): AsyncGenerator<Buffer> {
  const stamp = await stampOf(fh);
  const check = await checkGzipMembers(readRange(fh, undefined, opts.signal));
  if (opts.signal?.aborted) return;
  yield* verifiedData(check, (end) => unchanged(fh, stamp, readRange(fh, end, opts.signal)), opts);
}

/** A gzip pipe or FIFO: its members checked as it is spooled to a temporary file, then the verified ones read from there. */
export async function* verifiedGzipStream(chunks: AsyncIterable<Buffer>, opts: VerifiedGzipOptions): AsyncGenerator<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'ledger-query-'));
  let spool: FileHandle;
  try {
    spool = await open(join(dir, 'spool.gz'), 'w+');
  } finally {
    // Unlinked at once: the open descriptor keeps it, and nothing is left behind if the process dies.
    await rm(dir, { recursive: true, force: true });
  }
  try {
    const check = await checkGzipMembers(spooled(chunks, spool));
    if (opts.signal?.aborted) return;
    yield* verifiedData(check, (end) => readRange(spool, end, opts.signal), opts);
  } finally {
    await spool.close();
  }
}

/**
 * The data of the verified members, decompressed from `reread(end)` (the
 * compressed bytes from the start up to `end`, or to the end); then the fault
 * that stopped the check, if any, as a CorruptInputError at the uncompressed
 * offset where the failing member's data would start.
 */
async function* verifiedData(check: GzipCheck, reread: (end: number | undefined) => AsyncIterable<Buffer>, opts: VerifiedGzipOptions): AsyncGenerator<Buffer> {
  const fault = check.fault;
  const acceptTail = fault?.kind === 'cut' && opts.acceptUnverified === true;
  const end = acceptTail ? undefined : verifiedEnd(check);
  if (end !== 0) yield* gunzipped(reread(end));
  if (fault && !acceptTail && !opts.signal?.aborted) throw faultError(fault);
}

function faultError(f: GzipFault): CorruptInputError {
  const member = `gzip member ${f.member} (from compressed byte offset ${f.start})`;
  return new CorruptInputError(
    f.kind === 'cut'
      ? `${member} is cut short: ${f.reason}; nothing of it is stored (--accept-unverified stores its whole blocks unverified)`
      : `${member} fails its check: ${f.reason}; nothing of it is stored`,
    { offset: f.uncompressedStart },
  );
}

/** The bytes of `fh` from its start up to `end` (or its end), each chunk a buffer of its own (the checker and zlib keep them). */
async function* readRange(fh: FileHandle, end: number | undefined, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  let position = 0;
  while (end === undefined || position < end) {
    if (signal?.aborted) return;
    const want = end === undefined ? CHUNK_BYTES : Math.min(CHUNK_BYTES, end - position);
    const chunk = Buffer.allocUnsafe(want);
    const { bytesRead } = await fh.read(chunk, 0, want, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield chunk.subarray(0, bytesRead);
  }
}

/** Writes each chunk to `spool` before handing it on. */
async function* spooled(chunks: AsyncIterable<Buffer>, spool: FileHandle): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    await spool.write(chunk);
    yield chunk;
  }
}

type Stamp = { size: bigint; mtimeNs: bigint; ctimeNs: bigint };

async function stampOf(fh: FileHandle): Promise<Stamp> {
  const { size, mtimeNs, ctimeNs } = await fh.stat({ bigint: true });
  return { size, mtimeNs, ctimeNs };
}

/**
 * The chunks, each once the file is seen unchanged since it was checked: a
 * file rewritten in place between the two reads must not be stored as the
 * bytes that were verified. (A file replaced by another, e.g. renamed over
 * it, is no concern: the descriptor still reads the one that was checked.)
 */
async function* unchanged(fh: FileHandle, stamp: Stamp, chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) {
    const now = await stampOf(fh);
    if (now.size !== stamp.size || now.mtimeNs !== stamp.mtimeNs || now.ctimeNs !== stamp.ctimeNs) {
      throw new CorruptInputError('the file changed after its gzip members were checked (its size or modification time differ): read it again once nothing writes it');
    }
    yield chunk;
  }
}

/**
 * The uncompressed bytes of a gzip stream (concatenated members are one
 * stream, as zlib reads them). A stream that ends early (only when unverified
 * bytes are accepted) is not an error: zlib finishes it with a sync flush, so
 * every byte it holds comes out and the record splitter reports the cut.
 * (With zlib's default finish, its "unexpected end of file" destroys the
 * stream, and the output it still buffered is lost.) A failure is placed at
 * the uncompressed offset reached.
 */
async function* gunzipped(compressed: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ finishFlush: zlib.Z_SYNC_FLUSH, chunkSize: GUNZIP_CHUNK_BYTES });
  // A failure of either side also ends the loop below, which throws it. One
  // chunk read ahead is enough to keep zlib busy (Readable.from's default is 16).
  pipeline(Readable.from(compressed, { highWaterMark: 1 }), gunzip).catch(() => undefined);
  let reached = 0;
  try {
    for await (const chunk of gunzip) {
      reached += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  } catch (e) {
    if (isZlibError(e)) throw new CorruptInputError(`not valid gzip data (${e.message})`, { offset: reached });
    if (e instanceof CorruptInputError && e.offset === undefined) throw e.at(reached);
    throw e;
  } finally {
    gunzip.destroy();
  }
}

function isZlibError(e: unknown): e is Error {
  const code = (e as { code?: unknown } | undefined)?.code;
  return e instanceof Error && typeof code === 'string' && code.startsWith('Z_');
}
