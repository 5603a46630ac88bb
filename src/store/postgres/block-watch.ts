/**
 * Learning that the writer committed a block, for instances that stream
 * orders: the writer's transaction sends a notification on BLOCKS_CHANNEL as
 * it commits (./group-writer.ts), which PostgreSQL delivers to every session
 * listening on the primary, on whatever host, once the commit is done. It
 * costs the writer nothing it waits for and arrives within milliseconds,
 * where a poll as prompt would cost every instance a round trip every few
 * milliseconds. A read replica delivers no notifications: a slow poll backs
 * them up, and is all a replica's readers get.
 */
import type pg from 'pg';
import type { StoreLog } from '../store.js';
import { connect } from './connection.js';

/** The channel the writer notifies on as a group commits; its payload is the group's last height. */
export const BLOCKS_CHANNEL = 'ledger_query_blocks';

/** How often a watcher asks anyway, for what a lost notification or a replica would not say (ms). */
export const POLL_MS = 1000;
/** How long a watcher waits before listening again once its session failed (ms). */
const RECONNECT_MS = 1000;

/**
 * Calls `onBlock` whenever a block may have been committed; returns the stop
 * function. The caller reads what changed (the hint carries nothing to trust).
 * A lost session is logged once, as is listening again: meanwhile blocks are
 * learnt from the poll, up to POLL_MS late.
 */
export function watchBlocks(url: string, onBlock: () => void, log: StoreLog = () => undefined): () => void {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  /** Why the last session failed, while no session listens. */
  let lost: string | undefined;
  const listen = async () => {
    try {
      const c = await connect(url, 'block watch');
      if (stopped) return void c.end().catch(() => undefined);
      client = c;
      c.on('notification', () => onBlock());
      c.on('error', (e) => reconnect(e));
      c.on('end', () => reconnect(new Error('the server ended the session')));
      await c.query(`LISTEN ${BLOCKS_CHANNEL}`);
      if (lost !== undefined) log('info', 'block watch: listening for commits again');
      lost = undefined;
      // Blocks may have been committed while it was not listening.
      onBlock();
    } catch (e) {
      reconnect(e);
    }
  };
  const reconnect = (cause: unknown) => {
    if (!stopped && lost === undefined) {
      lost = cause instanceof Error ? cause.message : String(cause);
      log('warn', `block watch: lost its PostgreSQL session (${lost}); trying again every ${RECONNECT_MS} ms, polling every ${POLL_MS} ms meanwhile`);
    }
    const old = client;
    client = undefined;
    old?.removeAllListeners('end');
    old?.end().catch(() => undefined);
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      void listen();
    }, RECONNECT_MS);
  };
  const poll = setInterval(onBlock, POLL_MS);
  void listen();
  return () => {
    stopped = true;
    clearInterval(poll);
    clearTimeout(retry);
    const c = client;
    client = undefined;
    c?.removeAllListeners('end');
    void c?.end().catch(() => undefined);
  };
}
