/**
 * Requests per client, limited as the original's data node limits them
 * (datanode/ratelimit: a token bucket per client address, filled at a rate
 * per second up to a burst), with its headers on every answer:
 * `RateLimit-Limit` (the rate), `RateLimit-Reset` (its window, 1 s),
 * `RateLimit-Remaining` (tokens left) and `RateLimit-Request-Remote-Addr`
 * (the client as counted). Written by hand: a bucket is a few lines, and a
 * Fastify plugin would not see the requests the fast path answers
 * (./fast-path.ts). Per HTTP process: with `serve --workers N` a client
 * whose connections land on several processes has a bucket in each.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { BoundedMap, stringBytes } from '../bounded-map.js';
import type { RateLimit } from './http-options.js';

export const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Reset', 'RateLimit-Remaining', 'RateLimit-Request-Remote-Addr'] as const;

/** Buckets kept at most, in bytes: ~60,000 clients. A bucket dropped comes back full, as after a quiet spell. */
const BUCKET_BYTES = 8 << 20;
/** A bucket's bytes beside its key: the bucket, the map's entry and its links. */
const BUCKET_OVERHEAD = 160;

interface Bucket {
  tokens: number;
  /** When `tokens` was counted, in ms. */
  at: number;
}

export interface RateDecision {
  allowed: boolean;
  headers: OutgoingHttpHeaders;
  /** Seconds until the next request would be allowed, when this one is not. */
  retryAfterSeconds?: number;
  client: string;
}

/** The client a request comes from: its peer, or for a trusted proxy the last address its X-Forwarded-For adds. */
export function clientOf(req: IncomingMessage, trustedProxies: ReadonlySet<string>): string {
  const peer = normalise(req.socket.remoteAddress ?? '');
  if (!trustedProxies.has(peer)) return peer;
  const forwarded = req.headers['x-forwarded-for'];
  if (forwarded === undefined) return peer;
  // Rightmost first: each proxy appends the peer it saw, and only ours are to be believed.
  const hops = String(forwarded).split(',').map((h) => normalise(h.trim())).reverse();
  return hops.find((h) => isIP(h) !== 0 && !trustedProxies.has(h)) ?? peer;
}

/** IPv4 peers of a dual-stack socket come as ::ffff:a.b.c.d; counted as a.b.c.d. */
function normalise(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export class RateLimiter {
  private readonly buckets = new BoundedMap<string, Bucket>(BUCKET_BYTES);
  private readonly trusted: ReadonlySet<string>;

  constructor(private readonly limit: RateLimit, trustedProxies: readonly string[], private readonly now = () => Date.now()) {
    this.trusted = new Set(trustedProxies.map(normalise));
  }

  /** Takes a token for `req`'s client, if it has one left. */
  take(req: IncomingMessage): RateDecision {
    const client = clientOf(req, this.trusted);
    const now = this.now();
    const { perSecond, burst } = this.limit;
    const bucket = this.buckets.get(client) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(client, bucket, stringBytes(client) + BUCKET_OVERHEAD);
    const headers: OutgoingHttpHeaders = {
      'RateLimit-Limit': String(Math.round(perSecond)),
      'RateLimit-Reset': '1',
      'RateLimit-Remaining': String(Math.floor(bucket.tokens)),
      'RateLimit-Request-Remote-Addr': client,
    };
    if (allowed) return { allowed, headers, client };
    return { allowed, headers, client, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) };
  }

  get size(): { entries: number; bytes: number } {
    return this.buckets.size;
  }
}
