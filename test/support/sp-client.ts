/**
 * A real TCP client that speaks nanomsg SP PAIR the way the network's core
 * does when it dials a data node, plus the ways a peer can misbehave.
 */
import { connect, type Socket } from 'node:net';
import { encodeBusEvent } from '../../src/ingest/codec.js';
import type { BusEvent } from '../../src/ingest/events.js';
import { encodeSpHeader, encodeSpMessage, SpProtocol } from '../../src/ingest/nanomsg.js';

export interface SpClientOptions {
  host?: string;
  /** The protocol announced in the header; PAIR unless testing a wrong peer. */
  protocol?: number;
  /** Bytes sent instead of a proper header; an empty buffer sends no header at all. */
  header?: Buffer;
}

export class SpClient {
  private readonly received: Buffer[] = [];
  /** Resolves when the connection is gone (the listener closed it, or we did). */
  readonly closed: Promise<void>;
  /** The socket error that ended the connection, if any (e.g. a reset after a refusal). */
  error: Error | undefined;

  private constructor(readonly socket: Socket) {
    // Reading everything keeps our receive buffer empty, so closing sends a FIN, not a reset
    // that could discard bytes the listener has not read yet.
    socket.on('data', (chunk: Buffer) => this.received.push(chunk));
    socket.on('error', (e) => {
      this.error = e;
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  /** Connects and sends the SP header. Rejects if nothing listens there. */
  static async connect(port: number, opts: SpClientOptions = {}): Promise<SpClient> {
    const socket = connect({ host: opts.host ?? '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve();
      });
      socket.once('error', reject);
    });
    const client = new SpClient(socket);
    const header = opts.header ?? encodeSpHeader(opts.protocol ?? SpProtocol.PAIR);
    if (header.length > 0) await client.write(header);
    return client;
  }

  /** Everything the listener sent (its SP header, nothing else for PAIR). */
  receivedBytes(): Buffer {
    return Buffer.concat(this.received);
  }

  /** Writes bytes and waits until they are handed to the kernel. */
  write(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(bytes, (e) => (e ? reject(e) : resolve())));
  }

  /** Writes one framed message without waiting; false means the socket's buffer is full. */
  sendNoWait(payload: Uint8Array): boolean {
    return this.socket.write(encodeSpMessage(payload));
  }

  send(payload: Uint8Array): Promise<void> {
    return this.write(encodeSpMessage(payload));
  }

  /** One message per event, as the core sends them. */
  sendEvents(events: BusEvent[]): Promise<void> {
    return this.write(Buffer.concat(events.map((e) => encodeSpMessage(encodeBusEvent(e)))));
  }

  /** The first half of a framed message (length field and part of the payload). */
  sendHalfOf(event: BusEvent): Promise<void> {
    const framed = encodeSpMessage(encodeBusEvent(event));
    return this.write(framed.subarray(0, Math.ceil(framed.length / 2)));
  }

  /** A bare length field, e.g. an absurd one. */
  sendLength(length: bigint): Promise<void> {
    const field = Buffer.alloc(8);
    field.writeBigUInt64BE(length);
    return this.write(field);
  }

  /** Cuts the connection abruptly, as a crashing core would. */
  async destroy(): Promise<void> {
    this.socket.destroy();
    await this.closed;
  }

  /** Closes cleanly after everything written is sent. */
  async end(): Promise<void> {
    this.socket.end();
    await this.closed;
  }
}
