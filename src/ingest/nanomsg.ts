/**
 * The listening side of a nanomsg PAIR socket over TCP (scalability protocols,
 * "SP"), as the network's core dials into a data node.
 *
 * Hand-written on purpose: no well-kept JavaScript library speaks nanomsg
 * without binding the native C library, and what a PAIR listener needs is
 * small: an 8-byte protocol header each way, then messages framed by a
 * big-endian uint64 length. We only receive; we never send a message.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { CorruptInputError } from '../errors.js';

export const SP_HEADER_BYTES = 8;
const SP_LENGTH_BYTES = 8;
const SP_MAGIC = Buffer.from([0x00, 0x53, 0x50, 0x00]); // \0 'S' 'P' \0

/** nanomsg protocol numbers (family * 16 + role), for naming what a wrong peer speaks. */
export const SpProtocol = {
  PAIR: 16,
  PUB: 32,
  SUB: 33,
  REQ: 48,
  REP: 49,
  PUSH: 80,
  PULL: 81,
  SURVEYOR: 98,
  RESPONDENT: 99,
  BUS: 112,
} as const;

function protocolName(protocol: number): string {
  const entry = Object.entries(SpProtocol).find(([, n]) => n === protocol);
  return entry ? entry[0] : 'unknown';
}

/** The header a side sends first: `\0 S P \0 <protocol uint16 BE> \0 \0`. */
export function encodeSpHeader(protocol: number): Buffer {
  const header = Buffer.alloc(SP_HEADER_BYTES);
  SP_MAGIC.copy(header, 0);
  header.writeUInt16BE(protocol, 4);
  return header;
}

/**
 * Why a peer's header is unacceptable to a PAIR socket, or undefined if it is
 * fine. Like nanomsg itself, the two reserved bytes are not checked.
 */
export function pairHeaderProblem(header: Uint8Array): string | undefined {
  const bytes = Buffer.from(header.buffer, header.byteOffset, header.byteLength);
  if (bytes.length < SP_HEADER_BYTES || !bytes.subarray(0, 4).equals(SP_MAGIC)) {
    return `sent ${bytes.subarray(0, SP_HEADER_BYTES).toString('hex')}, not an SP header`;
  }
  const protocol = bytes.readUInt16BE(4);
  if (protocol !== SpProtocol.PAIR) {
    return `speaks protocol ${protocol} (${protocolName(protocol)}), not PAIR (${SpProtocol.PAIR})`;
  }
  return undefined;
}

/** One message as it travels: uint64 BE length, then the payload. */
export function encodeSpMessage(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(SP_LENGTH_BYTES + payload.length);
  out.writeBigUInt64BE(BigInt(payload.length), 0);
  out.set(payload, SP_LENGTH_BYTES);
  return out;
}

/** A length field that cannot be honoured: the byte stream is beyond repair. */

/**
 * Cuts a byte stream into SP messages. Chunks are kept as they arrive and
 * joined once per message, so a large message costs one copy, not one per
 * chunk.
 */
export class SpMessageSplitter {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Payload length of the message being received, once its length field is in. */
  private expected: number | undefined;

  constructor(private readonly maxMessageBytes: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next whole message, or undefined until more bytes arrive. Throws CorruptInputError. */
  next(): Buffer | undefined {
    if (this.expected === undefined) {
      if (this.buffered < SP_LENGTH_BYTES) return undefined;
      const length = this.take(SP_LENGTH_BYTES).readBigUInt64BE(0);
      if (length > BigInt(this.maxMessageBytes)) {
        throw new CorruptInputError(`announced a message of ${length} bytes, above the maximum of ${this.maxMessageBytes}`);
      }
      this.expected = Number(length);
    }
    if (this.buffered < this.expected) return undefined;
    const message = this.take(this.expected);
    this.expected = undefined;
    return message;
  }

  /** Bytes received of a message not yet complete (its length field included). */
  get pendingBytes(): number {
    return this.buffered + (this.expected === undefined ? 0 : SP_LENGTH_BYTES);
  }

  /** Describes the incomplete message, for a disconnect log line. */
  describePending(): string | undefined {
    if (this.expected !== undefined) {
      return `${this.buffered} of ${this.expected} payload bytes of a message received`;
    }
    if (this.buffered > 0) return `${this.buffered} of ${SP_LENGTH_BYTES} length bytes of a message received`;
    return undefined;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0];
    if (n === 0) return Buffer.alloc(0);
    if (first && first.length >= n) {
      // The usual case: the message lies within one chunk, no copy needed.
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0]!;
      const k = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, k);
      filled += k;
      if (k === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(k);
    }
    this.buffered -= n;
    return out;
  }
}

export type LogFn = (level: 'info' | 'warn', msg: string) => void;

export interface PairListenerOptions {
  host: string;
  /** 0 picks a free port; `address` tells which. */
  port: number;
  maxMessageBytes: number;
  /** A peer that has not sent its header by then is dropped, so it cannot hold the only peer slot. */
  handshakeTimeoutMs?: number;
  log: LogFn;
  /** A peer passed the handshake; its messages follow. */
  onPeer: (peer: string) => void;
  /**
   * One whole message. Return false to stop reading from the peer until
   * `resume()` (like a stream's push()); messages already received in the
   * same read are still delivered.
   */
  onMessage: (payload: Buffer) => boolean;
}

export interface PairListener {
  readonly address: { host: string; port: number };
  /** Start reading again after onMessage returned false. */
  resume(): void;
  /** Stops listening and drops the peer. */
  close(): Promise<void>;
}

const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** Notices a peer that vanished without a FIN (host crash, cable), so the peer slot frees up. */
const KEEPALIVE_MS = 30_000;

/** Listens for PAIR peers: one at a time, each one handshaken and framed. */
export async function listenPair(opts: PairListenerOptions): Promise<PairListener> {
  const server = createServer({ allowHalfOpen: false });
  const pair = new PairServer(server, opts);
  server.on('connection', (socket) => pair.accept(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => opts.log('warn', `listener error: ${e.message}`));
  const bound = server.address() as AddressInfo;
  return {
    address: { host: bound.address, port: bound.port },
    resume: () => pair.resume(),
    close: () => pair.close(),
  };
}

export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

class PairServer {
  /** The connection holding the single peer slot (handshaking or streaming). */
  private peer: Socket | undefined;
  private peerName = '';
  private paused = false;
  private readonly sockets = new Set<Socket>();
  private closing: Promise<void> | undefined;

  constructor(private readonly server: Server, private readonly opts: PairListenerOptions) {}

  accept(socket: Socket): void {
    const who = formatHostPort(socket.remoteAddress ?? '?', socket.remotePort ?? 0);
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    // A refused or dropped socket may still report a reset; it is already accounted for.
    socket.on('error', () => undefined);
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.peer) {
      this.opts.log('warn', `peer ${who} refused: ${this.peerName} is already connected (PAIR takes one peer at a time)`);
      socket.destroy();
      return;
    }
    this.peer = socket;
    this.peerName = who;
    this.servePeer(socket, who);
  }

  private servePeer(socket: Socket, who: string): void {
    const opts = this.opts;
    const log = opts.log;
    const handshakeMs = opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    const splitter = new SpMessageSplitter(opts.maxMessageBytes);
    let header: Buffer | undefined = Buffer.alloc(0); // undefined once the handshake passed
    let messages = 0;
    let droppedByUs = false;
    let lastError: Error | undefined;

    const release = () => {
      if (this.peer === socket) this.peer = undefined;
    };
    const drop = (reason: string) => {
      droppedByUs = true;
      log('warn', `peer ${who} ${reason}`);
      release();
      socket.destroy();
    };

    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.setTimeout(handshakeMs);
    socket.on('timeout', () => {
      if (header) drop(`sent no SP header within ${handshakeMs} ms: refused`);
    });
    socket.on('error', (e) => {
      lastError = e;
    });
    socket.write(encodeSpHeader(SpProtocol.PAIR));

    socket.on('data', (chunk: Buffer) => {
      if (droppedByUs) return;
      let rest = chunk;
      if (header) {
        header = Buffer.concat([header, chunk]);
        if (header.length < SP_HEADER_BYTES) return;
        const problem = pairHeaderProblem(header.subarray(0, SP_HEADER_BYTES));
        if (problem) {
          drop(`${problem}: refused`);
          return;
        }
        rest = header.subarray(SP_HEADER_BYTES);
        header = undefined;
        socket.setTimeout(0);
        log('info', `peer ${who} connected (SP PAIR)`);
        opts.onPeer(who);
      }
      splitter.push(rest);
      let keepReading = true;
      try {
        for (let m = splitter.next(); m !== undefined; m = splitter.next()) {
          messages++;
          if (!opts.onMessage(m)) keepReading = false;
        }
      } catch (e) {
        if (!(e instanceof CorruptInputError)) throw e;
        drop(`${e.message}: dropped (the stream cannot be resynchronised; the sender reconnects and resends)`);
        return;
      }
      if (!keepReading) this.paused = true;
      if (this.paused && !socket.destroyed) socket.pause();
    });

    socket.once('close', () => {
      release();
      if (droppedByUs || this.closing) return;
      const why = lastError ? ` (${lastError.message})` : '';
      if (header) {
        log('warn', `peer ${who} disconnected during the handshake${why}`);
        return;
      }
      const pending = splitter.describePending();
      if (pending) {
        log('warn', `peer ${who} disconnected mid-message after ${messages} whole messages, ${pending}${why}; the incomplete message is dropped`);
      } else {
        log('info', `peer ${who} disconnected after ${messages} messages${why}`);
      }
    });
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.peer && !this.peer.destroyed) this.peer.resume();
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      for (const socket of this.sockets) socket.destroy();
      this.server.close(() => resolve());
    });
    return this.closing;
  }
}
