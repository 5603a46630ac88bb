/**
 * Raw bytes to an HTTP server and its first answer back, for what no HTTP
 * client will send (a space in the request line, a bad method, garbage, a
 * head that never ends). By hand because clients refuse to write such
 * requests, and so cannot read what comes back either: the answer is read
 * here, just enough of HTTP/1.1 for a status, headers and a body.
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  /** Undefined when the server sent nothing HTTP-shaped. */
  status?: number;
  /** Lower-cased names; a repeated header's values joined by ', '. */
  headers: Record<string, string>;
  body: Buffer;
  /** Everything received. */
  received: Buffer;
  /** The server closed (or reset) the connection. */
  closed: boolean;
  /** Milliseconds from connecting to the answer being complete, or to the close, or to the deadline. */
  ms: number;
}

export interface RawOptions {
  /** Give up waiting after this long; the answer says what came until then. */
  deadlineMs: number;
  /** Half-close after writing (FIN), as a client that has nothing more to say. */
  end?: boolean;
  /**
   * Once the answer is complete, find out whether the server keeps the
   * connection: an answer saying `Connection: close` is followed to the
   * close; any other, by this request on the same connection, which the
   * server answers if it kept it (`closed` false) and does not if it closed
   * it (`closed` true). Events, not a time to wait for a close.
   */
  followUp?: Buffer;
  /** Wait for the server to close the connection (or the deadline), answer or not. */
  untilClose?: boolean;
}

/** How the request is written: bytes at once, or a function that writes over time. */
export type RawWrite = Buffer | ((socket: Socket) => Promise<void>);

const HEAD_END = Buffer.from('\r\n\r\n');

/** The first answer in `bytes`, once it is complete (by Content-Length, chunks or the close). */
function parse(bytes: Buffer, closed: boolean, head: boolean): Omit<RawAnswer, 'received' | 'closed' | 'ms'> | undefined {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return closed ? { headers: {}, body: Buffer.alloc(0) } : undefined;
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rest = bytes.subarray(headEnd + HEAD_END.length);
  const answer = (body: Buffer) => ({ ...(status ? { status: Number(status[1]) } : {}), headers, body });
  const noBody = head || (status !== null && (status[1] === '304' || status[1] === '204' || status[1]!.startsWith('1')));
  if (noBody) return answer(Buffer.alloc(0));
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length >= length) return answer(rest.subarray(0, length));
    return closed ? answer(rest) : undefined;
  }
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd < 0) return closed ? answer(Buffer.concat(chunks)) : undefined;
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) return answer(Buffer.concat(chunks));
      if (rest.length < lineEnd + 2 + size + 2) return closed ? answer(Buffer.concat(chunks)) : undefined;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  return closed ? answer(rest) : undefined;
}

/**
 * Connects to 127.0.0.1:`port`, writes, and reads until the first answer is
 * complete, the server closes, or the deadline passes; then lets go of the
 * connection.
 */
export function rawExchange(port: number, write: RawWrite, opts: RawOptions): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    // The answer to HEAD has no body, whatever its Content-Length says.
    const head = Buffer.isBuffer(write) && write.subarray(0, 5).toString('latin1') === 'HEAD ';
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    let done = false;
    /** The first answer's bytes, once it is complete and the follow-up is under way. */
    let first: Buffer | undefined;
    const finish = (closed: boolean, force = false) => {
      if (done) return;
      const bytes = first ?? Buffer.concat(received);
      const parsed = parse(bytes, closed, head);
      if (!force && (parsed === undefined || opts.untilClose)) return;
      if (!force && opts.followUp !== undefined) {
        if (first === undefined) {
          first = bytes;
          if (!/close/i.test(parsed!.headers.connection ?? '')) socket.write(opts.followUp);
        } else if (Buffer.concat(received).length > first.length) {
          return settle(parsed, false);
        }
        return;
      }
      settle(parsed, closed);
    };
    const settle = (parsed: ReturnType<typeof parse>, closed: boolean) => {
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const bytes = first ?? Buffer.concat(received);
      resolve({ ...(parsed ?? parse(bytes, true, head) ?? { headers: {}, body: Buffer.alloc(0) }), received: bytes, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false, true), opts.deadlineMs);
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      finish(false);
    });
    // A reset after the server answered and closed is a close like any other.
    socket.on('error', () => finish(true, true));
    socket.on('close', () => finish(true, true));
    socket.once('connect', () => {
      const written = typeof write === 'function'
        ? write(socket)
        : new Promise<void>((resolveWrite) => socket.write(write, () => resolveWrite()));
      written.then(() => {
        if (opts.end && !socket.destroyed) socket.end();
      }, (e: unknown) => {
        if (!done) reject(e);
      });
    });
  });
}

/** A well-formed GET of `target`, for liveness checks and as the seed of mutations. */
export const getRequest = (target: string, extraHeaders = '') =>
  Buffer.from(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extraHeaders}\r\n`, 'latin1');
