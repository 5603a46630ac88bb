import { closeSync, createReadStream, open as openFdCallback, openSync, readSync, statSync, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { CorruptInputError, UsageError } from '../errors.js';
import { decodeBusEvent } from './codec.js';
import { RecordSplitter } from './framing.js';
import type { EventSource, OffsetUnit, EventBatch, SourceEvent } from './source.js';
import { verifiedGzipFile, verifiedGzipStream } from './verified-gzip.js';

export interface FileSourceOptions {
  /**
   * Keep reading as the file grows (the core's file output); never ends by
   * itself. Only a regular uncompressed file can be followed: a gzip file is
   * refused when opened, and a pipe or FIFO is read until its writer closes it,
   * as without `follow`.
   */
  follow?: boolean;
  /** How often a followed file is checked for growth. */
  pollMs?: number;
  /** Stops a followed file, a pipe or a FIFO. */
  signal?: AbortSignal;
  /**
   * A gzip file cut short inside a member (so that member's CRC-32 and length
   * are missing) hands on that member's whole records too, unverified; without
   * it, nothing of that member is read and the source fails saying it is cut.
   */
  acceptUnverified?: boolean;
}

const CHUNK_BYTES = 1 << 20;
/**
 * Events are handed over a few at a time, not a chunk (~1,500) at once, so
 * that few decoded events live long enough to make a young-generation
 * collection costly (BENCHMARKS.md, "Figures behind the code").
 */
const BATCH_EVENTS = 128;
/** What every gzip member starts with (RFC 1952). */
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * Events of a framed event file: a regular file, a pipe, a FIFO or a character
 * device, plain or gzip-compressed (recognised by its first bytes, not its
 * name; then offsets count bytes of the uncompressed stream, and `unit` says so
 * once the source is opened). Sequence numbers must rise by one from record to
 * record: the framing has no checksum, and this is what catches a corrupt size
 * field (the next "record" then starts mid-event).
 *
 * A source that ends inside a record (its writer was cut off) ends normally:
 * its last batch, which may hold no events, carries `cutOff`.
 *
 * Of a gzip file, only members whose CRC-32 and length were checked are read
 * (./verified-gzip.ts): a member that fails its check, or that the file ends
 * inside (unless `acceptUnverified`), hands on nothing of itself; the source
 * then fails with a CorruptInputError naming it, at the uncompressed offset
 * where it starts, after the records of the members before it.
 */
export function fileSource(path: string, opts: FileSourceOptions = {}): EventSource {
  let unit: OffsetUnit = 'byte';
  return {
    name: pathToFileURL(path).href,
    get unit() {
      return unit;
    },
    events: () => readFile(path, opts, (u) => (unit = u)),
  };
}

async function* readFile(path: string, opts: FileSourceOptions, setUnit: (u: OffsetUnit) => void): AsyncGenerator<EventBatch> {
  const info = await stat(path);
  checkReadable(path, info);
  if (!info.isFile()) {
    // Pipes, FIFOs and devices (`<(gunzip -c f)` is /dev/fd/63) can neither seek nor be read at a position.
    yield* readStream(await openStream(path, info.isFIFO()), opts, setUnit);
    return;
  }
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(GZIP_MAGIC.length);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    if (!isGzip(head.subarray(0, bytesRead))) {
      setUnit('byte');
      yield* decodeChunks(positionalChunks(fh, opts), opts.signal);
      return;
    }
    setUnit('uncompressed byte');
    if (opts.follow) {
      throw new CorruptInputError(
        'the file is gzip-compressed, and a compressed file cannot be followed: read it without following ' +
          '(it is read to its end), or follow the uncompressed file the core writes',
        { offset: 0 },
      );
    }
    yield* decodeChunks(verifiedGzipFile(fh, opts), opts.signal);
  } finally {
    await fh.close();
  }
}

/**
 * A regular uncompressed file, read at positions: a followed file is read again
 * past its end as it grows, which a read stream (it ends at the end) cannot do.
 * It is also the measured fast path (`npm run bench:ingest`).
 */
async function* positionalChunks(fh: FileHandle, opts: FileSourceOptions): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) {
      if (!opts.follow || opts.signal?.aborted) return;
      // A half-written record stays in the splitter until the writer finishes it.
      await sleep(opts.pollMs ?? 100, undefined, { signal: opts.signal }).catch(() => undefined);
      continue;
    }
    position += bytesRead;
    // The splitter keeps references into the chunk, so hand it a copy.
    yield Buffer.from(buf.subarray(0, bytesRead));
  }
}

const openFd = promisify(openFdCallback);

/**
 * A pipe, FIFO or device as a stream. Opening a FIFO waits until a writer opens
 * it. A pipe is read through a socket handle, not fs: an fs read of a pipe
 * blocks a libuv pool thread until data comes, and destroying the stream waits
 * for that read, so stopping would wait for the writer. (A socket, e.g. a
 * stdin that Node.js made with a socketpair, cannot be opened by path: ENXIO.)
 */
async function openStream(path: string, fifo: boolean): Promise<Readable> {
  const fd = await openFd(path, 'r');
  return fifo
    ? new Socket({ fd, readable: true, writable: false })
    : createReadStream(path, { fd, highWaterMark: CHUNK_BYTES });
}

/** Events of a stream, gunzipped if it starts as gzip does. */
async function* readStream(raw: Readable, opts: FileSourceOptions, setUnit: (u: OffsetUnit) => void): AsyncGenerator<EventBatch> {
  const chunks = chunksOf(raw, opts.signal);
  try {
    const { gzip, all } = await sniffGzip(chunks);
    setUnit(gzip ? 'uncompressed byte' : 'byte');
    yield* decodeChunks(gzip ? verifiedGzipStream(all, opts) : all, opts.signal);
  } finally {
    // First the stream: a read still waiting on it (zlib's input reads ahead) would hold up the return.
    raw.destroy();
    await chunks.return(undefined);
  }
}

/** The chunks of `raw`; they end, quietly, when `signal` aborts. The stream is released either way. */
async function* chunksOf(raw: Readable, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  const stop = () => raw.destroy();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    if (signal?.aborted) return;
    for await (const chunk of raw) yield chunk as Buffer;
  } catch (e) {
    // Destroyed by the stop: a premature close, not a failure.
    if (!signal?.aborted) throw e;
  } finally {
    signal?.removeEventListener('abort', stop);
    raw.destroy();
  }
}

/**
 * Throws a UsageError naming `path` unless it is something events can be read
 * from: a regular file, a pipe or FIFO, or a character device (a terminal,
 * /dev/stdin). A directory, a socket or a block device is none of them.
 */
function checkReadable(path: string, info: Stats): void {
  if (info.isFile() || info.isFIFO() || info.isCharacterDevice()) return;
  const what = info.isDirectory() ? 'a directory' : info.isSocket() ? 'a socket' : info.isBlockDevice() ? 'a block device' : 'not a regular file';
  throw new UsageError(`not a file: ${path} is ${what}`);
}

/**
 * Checks, before anything is read, that `path` names an event file that can
 * be read: a UsageError naming it if it does not exist or is not a file.
 */
export function checkEventFile(path: string): void {
  let info: Stats;
  try {
    info = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`no such file: ${path}`);
    throw e;
  }
  checkReadable(path, info);
}

/**
 * The size of `path` if offsets of its source count its bytes (a regular,
 * uncompressed file), for showing progress; undefined for a gzip file (its
 * offsets count uncompressed bytes) or a pipe (no size).
 */
export function plainFileSize(path: string): number | undefined {
  const info = statSync(path);
  if (!info.isFile()) return undefined;
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(GZIP_MAGIC.length);
    return isGzip(head.subarray(0, readSync(fd, head, 0, head.length, 0))) ? undefined : info.size;
  } finally {
    closeSync(fd);
  }
}

function isGzip(head: Buffer): boolean {
  return head.length >= GZIP_MAGIC.length && head.subarray(0, GZIP_MAGIC.length).equals(GZIP_MAGIC);
}

/**
 * Reads enough of `chunks` to tell gzip from plain, and gives back every chunk,
 * those read included. By hand because a stream cannot be looked into without
 * taking its first chunk (a pipe may deliver a single byte first).
 */
async function sniffGzip(chunks: AsyncGenerator<Buffer>): Promise<{ gzip: boolean; all: AsyncIterable<Buffer> }> {
  const taken: Buffer[] = [];
  let length = 0;
  while (length < GZIP_MAGIC.length) {
    const next = await chunks.next();
    if (next.done) break;
    taken.push(next.value);
    length += next.value.length;
  }
  const head = Buffer.concat(taken);
  async function* all(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    yield* chunks;
  }
  return { gzip: isGzip(head), all: all() };
}

/**
 * Splits chunks into records and decodes them, handing over at most
 * BATCH_EVENTS at a time. A tail that is not a whole record when the chunks end
 * is a cut-off, unless the source was stopped (then its writer may finish it).
 */
async function* decodeChunks(chunks: AsyncIterable<Buffer>, signal: AbortSignal | undefined): AsyncGenerator<EventBatch> {
  const splitter = new RecordSplitter();
  let lastSeq: bigint | undefined;
  for await (const chunk of chunks) {
    splitter.push(chunk);
    let batch: SourceEvent[] = [];
    let failure: CorruptInputError | undefined;
    try {
      for (let rec = splitter.next(); rec; rec = splitter.next()) {
        if (lastSeq !== undefined && rec.seq !== lastSeq + 1n) {
          throw new CorruptInputError(`sequence number ${rec.seq} follows ${lastSeq}: the record is corrupt`, { offset: rec.offset });
        }
        lastSeq = rec.seq;
        batch.push({ event: decodeRecord(rec.event, rec.offset), offset: rec.offset });
        if (batch.length === BATCH_EVENTS) {
          yield { events: batch };
          batch = [];
        }
      }
    } catch (e) {
      if (e instanceof CorruptInputError) failure = e;
      else throw e;
    }
    // Events before a corrupt record may complete a block: hand them over first.
    if (batch.length > 0) yield { events: batch };
    if (failure) throw failure;
  }
  if (splitter.pending > 0 && !signal?.aborted) {
    yield { events: [], cutOff: { offset: splitter.offset, bytes: splitter.pending } };
  }
}

function decodeRecord(bytes: Buffer, offset: number) {
  try {
    return decodeBusEvent(bytes);
  } catch (e) {
    if (e instanceof CorruptInputError) throw e.at(offset);
    throw e;
  }
}
