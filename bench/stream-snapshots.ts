/**
 * Stream delivery for bench:compare: clients that each open
 * GET /api/v2/stream/orders for one market over plain HTTP, read its
 * snapshot to the frame that says it is the last page, and leave, again and
 * again; the rate is snapshots delivered per second over all of them.
 */
import { Agent, get } from 'node:http';

const LAST_PAGE = '"lastPage":true';

/** One snapshot read to its last page; resolves when it has been, rejects on anything else. */
function oneSnapshot(url: string, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`${url}: ${res.statusCode}`));
      }
      // The marker may straddle two chunks: the tail of the last one is kept.
      let tail = '';
      res.on('data', (chunk: Buffer) => {
        const text = tail + chunk.toString('latin1');
        if (text.includes(LAST_PAGE)) {
          req.destroy();
          resolve();
        }
        tail = text.slice(-LAST_PAGE.length);
      });
      res.on('end', () => reject(new Error(`${url}: ended before its last snapshot page`)));
    });
    req.on('error', (e) => {
      if (!req.destroyed || e.message !== 'socket hang up') reject(e);
    });
  });
}

export async function streamSnapshots(origin: string, marketId: string, o: { seconds: number; clients: number }): Promise<number> {
  const url = `${origin}/api/v2/stream/orders?marketIds=${marketId}`;
  const agent = new Agent({ keepAlive: false });
  const until = performance.now() + o.seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: o.clients }, async () => {
    while (performance.now() < until) {
      await oneSnapshot(url, agent);
      done++;
    }
  }));
  agent.destroy();
  return done / ((performance.now() - started) / 1000);
}
