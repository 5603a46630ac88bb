/**
 * Where a PostgreSQL store's bytes are, for the retention benchmark's log:
 * history partitions, current state (with its indexes), resting rows and
 * the rest, and how far vacuums (autovacuum's, the writer's) have got with
 * current state: a store that grows from window to window says here which
 * table holds it.
 */
import pg from 'pg';

export async function postgresSizes(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ part: string; mb: string }>(`
      SELECT CASE
          WHEN c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'orders_history'::regclass) THEN 'history'
          WHEN c.relname IN ('orders_current', 'orders_history_resting') THEN c.relname
          ELSE 'other' END AS part,
        round(sum(pg_total_relation_size(c.oid)) / 1048576.0)::text AS mb
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'm') AND n.nspname = 'public'
      GROUP BY 1 ORDER BY 1`);
    // The statistics' live and dead rows are estimates; the count is what the window keeps.
    const vacuum = (await client.query<{ rows: string; live: string; dead: string; auto: string; writer: string }>(
      `SELECT (SELECT count(*) FROM orders_current)::text AS rows, n_live_tup::text AS live, n_dead_tup::text AS dead,
         autovacuum_count::text AS auto, vacuum_count::text AS writer
       FROM pg_stat_user_tables WHERE relname = 'orders_current'`,
    )).rows[0];
    return `${rows.map((r) => `${r.part} ${r.mb} MB`).join(', ')}; ` +
      `orders_current ${vacuum?.rows} rows (${vacuum?.live} live, ${vacuum?.dead} dead by the statistics), ` +
      `${vacuum?.auto} autovacuums, ${vacuum?.writer} by the writer`;
  } finally {
    await client.end();
  }
}
