/**
 * The block watch of a PostgreSQL store: a session it loses is logged, once,
 * and so is listening again.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { watchBlocks } from '../../../src/store/postgres/block-watch.js';
import { createTestDatabase, forEachServer, query, type TestDatabase } from '../../support/postgres.js';

/** Resolves with the first of `lines` (growing) that matches, checking as each arrives. */
function waitFor(lines: string[], pattern: RegExp, arrived: { next?: () => void }): Promise<string> {
  return new Promise((resolve) => {
    const check = () => {
      const line = lines.find((l) => pattern.test(l));
      if (line !== undefined) resolve(line);
      else arrived.next = check;
    };
    check();
  });
}

forEachServer((server) => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase(server);
  });
  after(async () => {
    await db.drop();
  });

  test('a lost session is logged once, and listening again is logged', async () => {
    const lines: string[] = [];
    const arrived: { next?: () => void } = {};
    const stop = watchBlocks(db.url, () => undefined, (level, message) => {
      lines.push(`${level}: ${message}`);
      arrived.next?.();
    });
    try {
      // Its session, once it has connected.
      const listening = async () => {
        const [row] = await query<{ pid: number }>(db.url,
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'ledger-query block watch' AND datname = current_database()");
        return row?.pid;
      };
      let pid: number | undefined;
      while ((pid = await listening()) === undefined) await new Promise((r) => setImmediate(r));
      await query(db.url, 'SELECT pg_terminate_backend($1)', [pid]);
      const lost = await waitFor(lines, /lost its PostgreSQL session/, arrived);
      assert.match(lost, /^warn: block watch: lost its PostgreSQL session \(.+\); trying again every \d+ ms/);
      const back = await waitFor(lines, /listening for commits again/, arrived);
      assert.equal(back, 'info: block watch: listening for commits again');
      assert.equal(lines.length, 2, `one line for the loss and one for the return: ${lines.join(' | ')}`);
    } finally {
      stop();
    }
  });
});
