/**
 * The WebSocket subscribers of `npm run bench:stream`, in a process of their
 * own (forked by ./stream.ts, which talks to it over IPC), so that the
 * clients' work is not the server's. Frames are not parsed: a frame is told
 * apart by its first bytes (snapshot, updates or error), its bytes counted
 * and its arrival time kept; the orders of its frames are counted (by their
 * `"id":"` members) for one subscriber of each filter per process, whose
 * bytes every other subscriber of that filter must then have received
 * exactly (scanning every frame of 10,000 subscribers is work taken from
 * the cores the server needs). What each frame
 * stands for is worked out after the run, from the frames each filter was
 * owed (./stream.ts), so that receiving costs as little as it can.
 */
import { WebSocket } from 'ws';

/** One subscriber: the URL path it asks and which of the filters it stands for. */
export interface SubscriberSpec {
  path: string;
  kind: string;
}

/** What the harness tells a client process. */
export type ToClients =
  | { type: 'connect'; origin: string; subscribers: SubscriberSpec[]; concurrency: number }
  | { type: 'progress' }
  | {
      type: 'finish';
      /** Per filter kind: the height each update frame it is owed belongs to, in order. */
      owed: Record<string, number[]>;
      /** Per filter kind: the orders it is owed in all. */
      owedOrders: Record<string, number>;
      /** Wall time (ms, performance.timeOrigin + now) each height was seen committed, by height. */
      committedAt: Record<number, number>;
    };

/** Delays kept in buckets of this many ms, up to DELAY_BUCKETS of them (two minutes); later ones in the last. */
export const DELAY_BUCKET_MS = 0.5;
export const DELAY_BUCKETS = 240_000;

export interface KindReport {
  subscribers: number;
  /** Subscribers whose update frames, orders and ending were each exactly what they were owed. */
  exact: number;
  /** Up to a few subscribers that were not, and how. */
  faults: string[];
  frames: number;
  orders: number;
  bytes: number;
  /** Delays from commit to client, counted per DELAY_BUCKET_MS: [bucket, count] of the buckets counted. */
  histogram: [number, number][];
  samples: number;
  /** Blocks that arrived before the harness saw them committed (counted in the first bucket). */
  early: number;
}

/** What a client process tells the harness. */
export type FromClients =
  | { type: 'connected'; open: number; failed: number; snapshots: number; firstError?: string; seconds: number }
  | { type: 'progress'; frames: number; lastFrameAt: number; closed: number }
  | { type: 'finished'; kinds: Record<string, KindReport>; unmatched: number };

const SNAPSHOT = Buffer.from('{"result":{"snapshot"');
const UPDATES = Buffer.from('{"result":{"updates"');
const ORDER_ID = Buffer.from('"id":"');

const now = () => performance.timeOrigin + performance.now();

class Subscriber {
  ws: WebSocket | undefined;
  snapshotDone = false;
  /** Arrival times of its update frames (ms, wall clock), grown as needed. */
  times = new Float64Array(1024);
  frames = 0;
  orders = 0;
  bytes = 0;
  errors: string[] = [];
  closed: { code: number; reason: string } | undefined;

  constructor(readonly spec: SubscriberSpec, readonly control: boolean) {}

  onFrame(data: Buffer): void {
    const at = now();
    this.bytes += data.length;
    if (startsWith(data, UPDATES)) {
      if (this.frames === this.times.length) {
        const grown = new Float64Array(this.times.length * 2);
        grown.set(this.times);
        this.times = grown;
      }
      this.times[this.frames++] = at;
      if (this.control) for (let i = data.indexOf(ORDER_ID); i >= 0; i = data.indexOf(ORDER_ID, i + ORDER_ID.length)) this.orders++;
      lastFrameAt = at;
      framesSeen++;
    } else if (startsWith(data, SNAPSHOT)) {
      // An empty store's snapshot: one frame, the last page.
      if (data.includes('"lastPage":true')) this.snapshotDone = true;
    } else {
      this.errors.push(data.toString('utf8', 0, Math.min(data.length, 200)));
    }
  }
}

function startsWith(data: Buffer, prefix: Buffer): boolean {
  return data.length >= prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

let subscribers: Subscriber[] = [];
let lastFrameAt = 0;
let framesSeen = 0;

function send(message: FromClients): void {
  process.send!(message);
}

/** Opens every subscriber's socket, `concurrency` handshakes at a time; resolves once each is open and has its snapshot, or failed. */
async function connect(origin: string, specs: SubscriberSpec[], concurrency: number): Promise<void> {
  const started = now();
  const seen = new Set<string>();
  subscribers = specs.map((s) => {
    const control = !seen.has(s.kind);
    seen.add(s.kind);
    return new Subscriber(s, control);
  });
  let next = 0;
  let failed = 0;
  let firstError: string | undefined;
  const wsOrigin = origin.replace(/^http/, 'ws');
  const one = (sub: Subscriber) => new Promise<void>((resolve) => {
    const ws = new WebSocket(wsOrigin + sub.spec.path, { perMessageDeflate: false, skipUTF8Validation: true, handshakeTimeout: 60_000 });
    sub.ws = ws;
    let settled = false;
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      if (error !== undefined) {
        failed++;
        firstError ??= error;
      }
      resolve();
    };
    ws.on('message', (data: Buffer) => {
      sub.onFrame(data);
      if (sub.snapshotDone) settle();
    });
    ws.on('error', (e) => settle(e.message));
    ws.on('close', (code, reason) => {
      sub.closed = { code, reason: reason.toString() };
      settle(`closed ${code} ${reason.toString()}`);
    });
  });
  const worker = async () => {
    while (next < subscribers.length) await one(subscribers[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, subscribers.length) }, worker));
  send({
    type: 'connected', open: subscribers.filter((s) => s.ws?.readyState === WebSocket.OPEN).length, failed,
    snapshots: subscribers.filter((s) => s.snapshotDone).length, seconds: (now() - started) / 1000, ...(firstError === undefined ? {} : { firstError }),
  });
}

/** Each subscriber's frames matched with what its filter was owed: its verdict and its delays. */
function finish(m: Extract<ToClients, { type: 'finish' }>): void {
  const kinds: Record<string, KindReport> = {};
  const buckets: Record<string, Uint32Array> = {};
  let unmatched = 0;
  const controls = new Map(subscribers.filter((s) => s.control).map((s) => [s.spec.kind, s]));
  for (const sub of subscribers) {
    const owed = m.owed[sub.spec.kind] ?? [];
    const control = controls.get(sub.spec.kind)!;
    const k = (kinds[sub.spec.kind] ??= {
      subscribers: 0, exact: 0, faults: [], frames: 0, orders: 0, bytes: 0, histogram: [], samples: 0, early: 0,
    });
    const counts = (buckets[sub.spec.kind] ??= new Uint32Array(DELAY_BUCKETS));
    k.subscribers++;
    k.frames += sub.frames;
    k.orders += control.orders;
    k.bytes += sub.bytes;
    const fault = [
      sub.frames !== owed.length ? `${sub.frames} update frames of ${owed.length}` : '',
      control.orders !== m.owedOrders[sub.spec.kind] ? `its filter's control subscriber got ${control.orders} orders of ${m.owedOrders[sub.spec.kind]}` : '',
      sub.bytes !== control.bytes ? `${sub.bytes} bytes where its filter's control subscriber got ${control.bytes}` : '',
      sub.errors.length > 0 ? `error frame ${sub.errors[0]}` : '',
      sub.closed !== undefined ? `closed ${sub.closed.code} ${sub.closed.reason}` : '',
    ].filter(Boolean).join(', ');
    if (fault === '') k.exact++;
    else if (k.faults.length < 3) k.faults.push(`${sub.spec.path}: ${fault}`);
    if (sub.frames !== owed.length) {
      unmatched++;
      continue;
    }
    // A block may take several frames: its delay is that of its last one, when the subscriber holds all of it.
    for (let i = 0; i < sub.frames; i++) {
      const height = owed[i]!;
      if (owed[i + 1] === height) continue;
      const committed = m.committedAt[height];
      if (committed === undefined) continue;
      const delay = sub.times[i]! - committed;
      if (delay < 0) k.early++;
      counts[Math.min(DELAY_BUCKETS - 1, Math.max(0, Math.floor(delay / DELAY_BUCKET_MS)))]!++;
      k.samples++;
    }
  }
  for (const [kind, counts] of Object.entries(buckets)) counts.forEach((c, i) => { if (c > 0) kinds[kind]!.histogram.push([i, c]); });
  send({ type: 'finished', kinds, unmatched });
  // The harness ends this process once it has the answer: exiting here could cut the message short.
  for (const sub of subscribers) sub.ws?.terminate();
}

process.on('message', (m: ToClients) => {
  switch (m.type) {
    case 'connect':
      void connect(m.origin, m.subscribers, m.concurrency);
      break;
    case 'progress':
      send({ type: 'progress', frames: framesSeen, lastFrameAt, closed: subscribers.filter((s) => s.closed !== undefined).length });
      break;
    case 'finish':
      finish(m);
      break;
  }
});
process.on('disconnect', () => process.exit(0));
