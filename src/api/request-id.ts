/**
 * Request ids for the log, unique across the HTTP processes of `serve
 * --workers N` and across restarts (Fastify's own, req-1, req-2, ..., start
 * again in every process): a random prefix per process, then a counter.
 */
import { randomBytes } from 'node:crypto';

export function requestIds(): () => string {
  const prefix = randomBytes(4).toString('hex');
  let count = 0;
  return () => `${prefix}-${(++count).toString(36)}`;
}
