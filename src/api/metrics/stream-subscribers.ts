/**
 * Streams open in this process, for the `ledger_query_stream_subscribers`
 * gauge (./server-metrics.ts): the order stream (../stream/) says when a
 * subscriber comes and goes. A count of the process, not of a server: it is
 * what the process holds open, whichever server took the subscriber.
 */
let open = 0;

export const streamSubscribers = {
  /** A subscriber came: its stream is open. */
  opened(): void {
    open++;
  },
  /** A subscriber went (it left, was dropped, or the server closed its stream): call once per opened(). */
  closed(): void {
    open = Math.max(0, open - 1);
  },
  get count(): number {
    return open;
  },
};
