/**
 * One prune batch of PostgreSQL's (./pruner.ts) as a function of the
 * writer's session (pg_temp: it lives as long as the connection, and is
 * the code's, not the schema's), so that a batch is one statement and one
 * round trip: on a loaded machine each round trip waits for the server's
 * process to be scheduled, and the ten or so a batch made set its wall
 * time (BENCHMARKS.md, "Retention"). The steps are those the rules take
 * (docs/compatibility.md, section 13):
 *
 * 1. Rows stored since the last look (above recheck_height) supersede the
 *    resting rows of their orders: those resting rows go, `max_rows` of the
 *    new rows at a time.
 * 2. From pruned_below, the run of whole blocks older than the window that
 *    `max_rows` history rows reach: orders that can no longer trade and
 *    whose latest row is there are forgotten (their current state goes,
 *    order_counts follow), the latest rows of those that can still trade
 *    are copied to orders_history_resting, and the blocks go.
 * 3. The retention row: the oldest kept block moves past the run.
 *
 * Returns the rows pruned, the orders forgotten (current-state rows deleted:
 * ./vacuum.ts counts them), whether more is left now, and pruned_below.
 */
import { CAN_TRADE, COUNTED_DIMENSIONS, noLaterRow } from '../prune-sql.js';
import { POSTGRES } from './dialect.js';

/**
 * `h` is its order's latest row (../prune-sql.ts isLatest): the row of the
 * current version in the block of the order's last change. An order stored
 * before that was kept (migration 7), or copied in, has none, and is probed
 * as before: every later partition's index by order, the cost that set a
 * batch's time (BENCHMARKS.md, "The last change"). CASE keeps the probe a
 * subplan run only for those.
 */
const IS_LATEST = `o.version = h.version AND CASE WHEN o.last_height IS NULL THEN ${noLaterRow(POSTGRES.historyOrder.column)} ELSE o.last_height = h.height END`;

/** Of history rows `h` being pruned, those that stay: the latest row of an order that can still trade. */
const RESTS = `EXISTS (SELECT 1 FROM orders_current o WHERE o.id_bytes = h.id_bytes AND o.status IN ${CAN_TRADE} AND ${IS_LATEST})`;

export const PRUNE_BATCH_FUNCTION = 'pg_temp.lq_prune_batch';

export const CREATE_PRUNE_BATCH = `
CREATE OR REPLACE FUNCTION ${PRUNE_BATCH_FUNCTION}(win_ns BIGINT, max_rows INTEGER,
  OUT pruned BIGINT, OUT forgotten BIGINT, OUT more BOOLEAN, OUT below NUMERIC)
LANGUAGE plpgsql AS $fn$
DECLARE
  started TIMESTAMPTZ := clock_timestamp();
  last_height NUMERIC;
  cutoff NUMERIC;
  recheck NUMERIC;
  first_height NUMERIC;
  first_time BIGINT;
  upto NUMERIC;
  young NUMERIC;
  next_height NUMERIC;
  next_time BIGINT;
  stop NUMERIC;
  got BIGINT;
  swept BOOLEAN := false;
  ns BIGINT;
BEGIN
  pruned := 0;
  forgotten := 0;
  more := false;
  SELECT r.pruned_below, r.recheck_height INTO below, recheck FROM retention r WHERE r.only_row = 1 FOR UPDATE;
  SELECT l.height, l.time::numeric - win_ns INTO last_height, cutoff FROM last_block l WHERE l.only_row = 1;
  IF last_height IS NULL THEN
    RETURN;
  END IF;

  IF recheck < last_height THEN
    IF NOT EXISTS (SELECT 1 FROM orders_history_resting) THEN
      recheck := last_height;
    ELSE
      SELECT h.height INTO stop FROM orders_history h WHERE h.height > recheck ORDER BY h.height, h.seq OFFSET max_rows LIMIT 1;
      stop := coalesce(stop, last_height);
      DELETE FROM orders_history_resting
        WHERE id_bytes IN (SELECT h.id_bytes FROM orders_history h WHERE h.height > recheck AND h.height <= stop);
      GET DIAGNOSTICS got = ROW_COUNT;
      pruned := pruned + got;
      recheck := stop;
    END IF;
  END IF;
  more := recheck < last_height;

  SELECT b.height, b.time INTO first_height, first_time FROM blocks b WHERE b.height >= below ORDER BY b.height LIMIT 1;
  IF first_height IS NOT NULL AND first_time < cutoff THEN
    SELECT h.height INTO upto FROM orders_history h WHERE h.height >= below ORDER BY h.height, h.seq OFFSET max_rows LIMIT 1;
    -- The batch ends at the first block not older than the window, or at the budget's end, whichever comes first.
    IF upto IS NOT NULL AND upto <= first_height THEN
      upto := first_height + 1;
    END IF;
    upto := coalesce(upto, last_height + 1);
    SELECT b.height INTO young FROM blocks b
      WHERE b.height > first_height AND b.height < upto AND b.time >= cutoff ORDER BY b.height LIMIT 1;
    IF young IS NOT NULL THEN
      stop := young;
    ELSE
      SELECT b.height, b.time INTO next_height, next_time FROM blocks b WHERE b.height >= upto ORDER BY b.height LIMIT 1;
      stop := coalesce(next_height, upto);
      more := more OR (next_height IS NOT NULL AND next_time < cutoff);
    END IF;

    WITH forgotten AS (
      DELETE FROM orders_current o USING orders_history h
      WHERE h.height >= below AND h.height < stop AND o.id_bytes = h.id_bytes AND o.status NOT IN ${CAN_TRADE} AND ${IS_LATEST}
      RETURNING ${COUNTED_DIMENSIONS.map(([, c]) => `o.${c}`).join(', ')}
    ), counted AS (
      INSERT INTO order_counts (dimension, value, n)
      SELECT d.dimension, d.value, -count(*) FROM forgotten f CROSS JOIN LATERAL (VALUES
        ${COUNTED_DIMENSIONS.map(([name, c]) => `('${name}', f.${c}::integer)`).join(', ')}
      ) AS d (dimension, value)
      GROUP BY d.dimension, d.value
      ON CONFLICT (dimension, value) DO UPDATE SET n = order_counts.n + excluded.n
    )
    SELECT count(*) INTO got FROM forgotten;
    forgotten := got;
    pruned := pruned + got;
    INSERT INTO orders_history_resting (height, seq, id_bytes, version, market_no, party_no, message)
      SELECT h.height, h.seq, h.id_bytes, h.version, h.market_no, h.party_no, h.message
      FROM orders_history h WHERE h.height >= below AND h.height < stop AND ${RESTS};
    GET DIAGNOSTICS got = ROW_COUNT;
    pruned := pruned - got;
    SELECT count(*) INTO got FROM orders_history h WHERE h.height >= below AND h.height < stop;
    pruned := pruned + got;
    DELETE FROM blocks WHERE height < stop;
    below := stop;
    swept := true;
  END IF;

  ns := (extract(epoch FROM clock_timestamp() - started) * 1e9)::bigint;
  UPDATE retention SET pruned_below = below, recheck_height = recheck,
    window_ns = CASE WHEN swept THEN win_ns ELSE window_ns END,
    rows_pruned = rows_pruned + pruned, prune_ns = prune_ns + ns, longest_batch_ns = greatest(longest_batch_ns, ns)
    WHERE only_row = 1;
END
$fn$`;
