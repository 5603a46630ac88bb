/**
 * What the writer's vacuum tests share (pruner.test.ts, vacuum.test.ts): a
 * store whose tables pruning deletes from autovacuum leaves alone, so that
 * whatever vacuums them is the writer's vacuum, and the server's count of it.
 */
import { PostgresWriter } from '../../../src/store/postgres/writer.js';
import { query } from '../../support/postgres.js';

/** Creates a store's schema on `url`, with autovacuum off for orders_current, orders_history_resting and blocks. */
export async function storeWithoutAutovacuum(url: string): Promise<void> {
  await (await PostgresWriter.open(url, {})).close();
  await query(url, `ALTER TABLE orders_current SET (autovacuum_enabled = off);
    ALTER TABLE orders_history_resting SET (autovacuum_enabled = off); ALTER TABLE blocks SET (autovacuum_enabled = off)`);
}

/** How many times orders_current was vacuumed other than by autovacuum, by the server's statistics. */
export async function vacuumsOfOrdersCurrent(url: string): Promise<number> {
  const rows = await query<{ n: string }>(url, "SELECT vacuum_count::text AS n FROM pg_stat_user_tables WHERE relname = 'orders_current'");
  return Number(rows[0]!.n);
}
