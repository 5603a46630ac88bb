/**
 * The soak's load generator, forked by bench/soak.ts so that it has an event
 * loop of its own: a mix of request paths, rotated, either as fast as
 * `connections` requests in flight allow (the maximum) or paced at a fixed
 * rate, one request every 1/rate s, whatever the answers do (the soak).
 * Every `windowSeconds` it reports the window's latencies and errors to its
 * parent; at the end, the whole run's.
 *
 * Written here rather than driven through autocannon: autocannon's
 * `overallRate` lets each connection send its share of a second back to back
 * at the start of the second, then wait (lib/httpClient.js), so at 80% of the
 * maximum the server runs flat out for 0.8 s and idles for 0.2 s, and the
 * p99 is that of a saturated server. Here requests are spread evenly, and a
 * request's latency counts from when it was due, so time spent waiting for a
 * free connection (the server fell behind) is counted, not hidden.
 */
import { Agent, request } from 'node:http';

export interface ClientJob {
  origin: string;
  paths: readonly string[];
  /** Requests in flight at most (sockets kept open). */
  connections: number;
  seconds: number;
  /** Requests per second, evenly spaced; absent: as fast as `connections` allow. */
  rate?: number;
  windowSeconds: number;
}

/** Counts of one window or of the whole run. */
export interface ClientCounts {
  /** Seconds since the run began, at the window's end. */
  at: number;
  seconds: number;
  requests: number;
  /** Answers with a status outside 2xx and 3xx. */
  badStatus: number;
  /** The statuses of those answers, with their counts. */
  statuses: Record<string, number>;
  /** Requests not answered within 10 s of when they were due (waiting for a free connection included). */
  timeouts: number;
  /** Connection refused or reset, a socket closed mid-answer. */
  socketErrors: number;
  /** The first few error messages, to say what went wrong. */
  samples: string[];
  /** Milliseconds, from when each request was due to the end of its answer. */
  p50: number;
  p99: number;
  max: number;
  /** Highest X-Block-Height seen in an answer: that queries kept seeing new blocks. */
  blockHeight: number;
}

export type ClientMessage = { type: 'window'; counts: ClientCounts } | { type: 'done'; counts: ClientCounts };

const TIMEOUT_MS = 10_000;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** Latencies and errors gathered between two reports. */
class Tally {
  requests = 0;
  latencies: number[] = [];
  badStatus = 0;
  statuses: Record<string, number> = {};
  timeouts = 0;
  socketErrors = 0;
  samples: string[] = [];
  blockHeight = 0;

  note(sample: string): void {
    if (this.samples.length < 5) this.samples.push(sample);
  }

  counts(at: number, seconds: number): ClientCounts {
    const sorted = Float64Array.from(this.latencies).sort();
    return {
      at, seconds, requests: this.requests,
      badStatus: this.badStatus, statuses: this.statuses, timeouts: this.timeouts, socketErrors: this.socketErrors,
      samples: this.samples, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN,
      blockHeight: this.blockHeight,
    };
  }
}

export async function runClient(job: ClientJob, report: (m: ClientMessage) => void): Promise<void> {
  // Every connection in turn (fifo), so none sits idle until the server closes it, and an idle one closed
  // before the server's announced Keep-Alive timeout (30 s; Node's agent honours the hint only below a
  // timeout of its own): a request sent on a connection the server is closing fails, which real clients
  // retry, and which is the client's race, not the server's fault.
  const agent = new Agent({ keepAlive: true, maxSockets: job.connections, scheduling: 'fifo', timeout: 20_000 });
  const all = new Tally();
  let window = new Tally();
  const started = performance.now();
  let windowStarted = started;
  const elapsed = () => (performance.now() - started) / 1000;
  let next = 0;

  /** One request of the rotation, its latency counted from `due` (ms, performance.now()). */
  const one = (due: number) => new Promise<void>((resolve) => {
    const path = job.paths[next++ % job.paths.length]!;
    all.requests++;
    window.requests++;
    const fail = (kind: 'timeouts' | 'socketErrors', message: string) => {
      for (const t of [all, window]) {
        t[kind]++;
        t.note(`${kind === 'timeouts' ? 'timeout' : 'socket error'}: ${message}: ${path}`);
      }
      resolve();
    };
    const req = request(job.origin + path, { agent }, (res) => {
      const status = res.statusCode ?? 0;
      const height = Number(res.headers['x-block-height'] ?? 0);
      res.on('error', (e) => fail('socketErrors', e.message));
      res.resume();
      res.on('end', () => {
        const latency = performance.now() - due;
        for (const t of [all, window]) {
          t.latencies.push(latency);
          // Answered, but later than a client would have waited: the server had fallen behind.
          if (latency > TIMEOUT_MS) {
            t.timeouts++;
            t.note(`timeout: answered ${(latency / 1000).toFixed(1)} s after it was due: ${path}`);
          }
          if (height > t.blockHeight) t.blockHeight = height;
          if (status < 200 || status >= 400) {
            t.badStatus++;
            t.statuses[status] = (t.statuses[status] ?? 0) + 1;
            t.note(`status ${status}: ${path}`);
          }
        }
        resolve();
      });
    });
    req.setTimeout(TIMEOUT_MS, () => {
      req.destroy();
      fail('timeouts', `no answer within ${TIMEOUT_MS / 1000} s`);
    });
    req.on('error', (e) => {
      // A timeout destroys the request, which then errs too: counted once.
      if (!req.destroyed || !/socket hang up|aborted/.test(e.message)) fail('socketErrors', e.message);
    });
    req.end();
  });

  const reporter = setInterval(() => {
    const now = performance.now();
    report({ type: 'window', counts: window.counts(elapsed(), (now - windowStarted) / 1000) });
    window = new Tally();
    windowStarted = now;
  }, job.windowSeconds * 1000);

  const end = started + job.seconds * 1000;
  const inFlight = new Set<Promise<void>>();
  if (job.rate === undefined) {
    // Closed loop: each of `connections` loops sends its next request when the last is answered.
    await Promise.all(Array.from({ length: job.connections }, async () => {
      while (performance.now() < end) await one(performance.now());
    }));
  } else {
    // Open loop: request i is due at started + i/rate, sent on the first tick at or after that.
    const interval = 1000 / job.rate;
    let sent = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        const until = Math.min(now, end);
        while (started + sent * interval <= until) {
          const p = one(started + sent * interval);
          inFlight.add(p);
          void p.then(() => inFlight.delete(p));
          sent++;
        }
        if (now >= end) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    await Promise.all(inFlight);
  }
  clearInterval(reporter);
  const now = performance.now();
  if (now - windowStarted > 1000) report({ type: 'window', counts: window.counts(elapsed(), (now - windowStarted) / 1000) });
  report({ type: 'done', counts: all.counts(elapsed(), elapsed()) });
  agent.destroy();
}

// Forked by bench/soak.ts: one job, then exit.
if (process.send !== undefined) {
  process.once('message', (job: ClientJob) => {
    void runClient(job, (m) => process.send!(m)).then(() => process.disconnect());
  });
}
