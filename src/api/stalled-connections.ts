/**
 * Stalled connections: a connection holding bytes of an answer its client
 * does not take, with nothing moved either way for the idle timeout, is
 * closed. Found by a sweep of the open connections a few times per timeout
 * rather than by Node's socket timeout (server.setTimeout), which re-armed a
 * timer for every request and refreshed it on every read and write: a few
 * us of every cached answer (BENCHMARKS.md, "The fast path won back (issue
 * 30)", round 5). Node's keep-alive timeout still closes a connection idle
 * between requests, and the head timeout one whose request never arrives.
 */
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Connections left to rules of their own (a stream's: its unread budget, its close grace). */
const EXEMPT = new WeakSet<Duplex>();

/** Leaves `socket` out of every sweep: a stream may hold what its client has not read yet, by its own rules. */
export function exemptFromStalls(socket: Duplex): void {
  EXEMPT.add(socket);
}

/** What a connection had moved at the last sweep, and when it was last seen to move. */
interface Progress {
  read: number;
  written: number;
  queued: number;
  /** performance.now() of its watch or of the sweep that last saw it move or hold nothing: never before it last moved, so none is closed early. */
  movedAt: number;
}

/** The bytes a socket has read, handed on and still holds, as Node counts them. */
function movedOf(socket: Socket): { read: number; written: number; queued: number } {
  return { read: socket.bytesRead, written: socket.bytesWritten ?? 0, queued: socket.writableLength };
}

export class StalledConnections {
  private readonly open = new Map<Socket, Progress>();
  private timer: NodeJS.Timeout | undefined;

  /** `stallMs`: how long a connection may hold unsent bytes with nothing moving. */
  constructor(readonly stallMs: number) {}

  /** How often the sweep runs: four times per timeout, so that one is closed at most half a timeout late. */
  get sweepMs(): number {
    return Math.max(50, Math.floor(this.stallMs / 4));
  }

  watch(socket: Socket): void {
    this.open.set(socket, { ...movedOf(socket), movedAt: performance.now() });
    socket.once('close', () => this.open.delete(socket));
  }

  /** Closes the connections stalled for `stallMs` at `now` (performance.now()); how many it closed. */
  sweep(now: number): number {
    let closed = 0;
    for (const [socket, last] of this.open) {
      if (EXEMPT.has(socket)) {
        this.open.delete(socket);
        continue;
      }
      const moved = movedOf(socket);
      const still = moved.read === last.read && moved.written === last.written && moved.queued === last.queued;
      Object.assign(last, moved);
      if (moved.queued === 0 || !still) {
        last.movedAt = now;
      } else if (now - last.movedAt >= this.stallMs) {
        socket.destroy();
        this.open.delete(socket);
        closed++;
      }
    }
    return closed;
  }

  /** Sweeps every sweepMs until stop(); the timer keeps no process alive. */
  start(): void {
    this.timer ??= setInterval(() => this.sweep(performance.now()), this.sweepMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Connections watched. */
  get size(): number {
    return this.open.size;
  }
}
