/**
 * The SQL that writes a group (./group-writer.ts): session-local staging
 * tables that COPY fills, and the set-based statements that move their rows
 * into place. The semantics are the embedded writer's (../sqlite/group-writer.ts).
 */
import type pg from 'pg';
import { CURRENT_FIELDS, SIGNER_ADDED_FIELDS, SIGNER_REMOVED_FIELDS, type CurrentField } from '../rows.js';

/**
 * How a staged column of an order's current state travels (binary COPY):
 * the binary form of a type cheap to write here. An unsigned 64-bit value is
 * its decimal text, cast to NUMERIC on the server.
 */
export type StagedKind = 'bytea' | 'text' | 'int2' | 'int4' | 'int8' | 'u64';

const STAGED_KINDS: Record<CurrentField, StagedKind> = {
  id_bytes: 'bytea', id_key: 'bytea', market_no: 'text', party_no: 'text', side: 'int4', price: 'text',
  size: 'u64', remaining: 'u64', time_in_force: 'int4', type: 'int4', created_at: 'int8', status: 'int4',
  expires_at: 'int8', reference: 'text', reason: 'int4', updated_at: 'int8', version: 'u64', batch_id: 'u64',
  pegged_reference: 'int4', pegged_offset: 'text', lp_id: 'text', post_only: 'int2', reduce_only: 'int2',
  iceberg_peak_size: 'u64', iceberg_minimum_visible_size: 'u64', iceberg_reserved_remaining: 'u64',
  live: 'int2', vega_time: 'int8',
};
const SQL_TYPES: Record<StagedKind, string> = {
  bytea: 'BYTEA', text: 'TEXT', int2: 'SMALLINT', int4: 'INTEGER', int8: 'BIGINT', u64: 'TEXT',
};

/**
 * Staging columns of an order's current state, in the order of a row
 * (CURRENT_FIELDS): those of orders_current, with its market and party by id
 * (numbered on the server, see CURRENT_SQL).
 */
export const STAGED_CURRENT_FIELDS = CURRENT_FIELDS.map((c) =>
  c === 'market_no' ? 'market_id' : c === 'party_no' ? 'party_id' : c);
/** The kind of each, in the same order. */
export const STAGED_CURRENT_KINDS: readonly StagedKind[] = CURRENT_FIELDS.map((c) => STAGED_KINDS[c]);
/**
 * What COPY fills of lq_current: the staged fields, then the order's last
 * change (the height of its latest row in the group, as decimal text),
 * which orders_current keeps for pruning (./prune-batch-sql.ts).
 */
export const STAGED_COPY_FIELDS = [...STAGED_CURRENT_FIELDS, 'last_height'];

/**
 * The counted columns of the state an order had before the group (see
 * CURRENT_SQL), filled on the server; NULL for an order not stored before.
 */
const COUNTED = ['status', 'type', 'time_in_force', 'live'] as const;
const PRIOR_COLUMNS = COUNTED.map((c) => `prior_${c}`);

/**
 * One table per kind of row, created once per session. `seq` numbers rows in
 * the order COPY reads them: where the group holds a key twice, the later row
 * wins. lq_markets and lq_parties list the group's ids in the order it first
 * names them.
 *
 * A group's rows are deleted before it commits (or die with its rollback),
 * and VACUUM makes their space free for the next group. ON COMMIT DELETE ROWS
 * would truncate each table's file at every commit, and its next group extend
 * it again: on a busy disk, a file truncation waits for the file system's
 * journal (BENCHMARKS.md, "Figures behind the code").
 */
const STAGING_TABLES = ['lq_current', 'lq_markets', 'lq_parties', 'lq_signatures', 'lq_added', 'lq_removed'];
const KEPT = 'WITH (vacuum_truncate = false)';
const STAGING = `
  CREATE TEMP TABLE lq_current (
    ${STAGED_CURRENT_FIELDS.map((c, i) => `${c} ${SQL_TYPES[STAGED_CURRENT_KINDS[i]!]}`).join(', ')},
    last_height TEXT,
    ${PRIOR_COLUMNS.map((c) => `${c} INTEGER`).join(', ')}
  ) ${KEPT};
  CREATE TEMP TABLE lq_markets (pos INTEGER NOT NULL, id TEXT NOT NULL) ${KEPT};
  CREATE TEMP TABLE lq_parties (pos INTEGER NOT NULL, id TEXT NOT NULL) ${KEPT};
  CREATE TEMP TABLE lq_signatures (seq BIGINT GENERATED ALWAYS AS IDENTITY, LIKE node_signatures) ${KEPT};
  CREATE TEMP TABLE lq_added (seq BIGINT GENERATED ALWAYS AS IDENTITY, LIKE signer_added) ${KEPT};
  CREATE TEMP TABLE lq_removed (seq BIGINT GENERATED ALWAYS AS IDENTITY, LIKE signer_removed) ${KEPT};
`;

/** Empties the staging tables, inside the group's transaction. */
export const CLEAR_STAGING_SQL = STAGING_TABLES.map((t) => `DELETE FROM ${t}`).join(';\n');
/** Frees the space of the rows a group staged, between transactions (VACUUM cannot run inside one). */
export const VACUUM_STAGING_SQL = `VACUUM ${STAGING_TABLES.join(', ')}`;

/**
 * Prepares a session to write groups.
 * - Staging tables. A group of catching up stages tens of MB; temp_buffers
 *   (8 MB by default, settable only before the session first touches a
 *   temporary table) keeps that in memory.
 * - No hash or merge joins. Every join here looks up the group's rows in a
 *   table by its unique index; the planner, with no statistics on a staging
 *   table and a large table on the other side, would rather scan and hash
 *   the large table whole (all of orders_current, for each group). These
 *   settings are the writer session's own.
 */
export async function prepareWriteSession(client: pg.ClientBase): Promise<void> {
  await client.query(`SET temp_buffers = '128MB'`);
  await client.query('SET enable_hashjoin = off');
  await client.query('SET enable_mergejoin = off');
  await client.query(STAGING);
}

const IDENTITY: readonly CurrentField[] = ['id_bytes', 'id_key'];
const list = (columns: readonly string[], prefix = '') => columns.map((c) => prefix + c).join(', ');
const assignAll = (columns: readonly string[]) => columns.map((c) => `${c} = excluded.${c}`).join(', ');

/** Ids missing from an interning table get the next numbers, in the order the group first names them. */
const internSql = (table: 'markets' | 'parties', staged: string) => `
  INSERT INTO ${table} (id)
  SELECT s.id FROM ${staged} s WHERE NOT EXISTS (SELECT 1 FROM ${table} t WHERE t.id = s.id) ORDER BY s.pos
  ON CONFLICT (id) DO NOTHING`;
/**
 * Numbers the group's markets and parties, and returns the numbers of each in
 * the order the group lists them (`markets` and `parties`, arrays): history
 * rows are sent with them.
 */
export const NUMBERING_SQL = `
  ${internSql('markets', 'lq_markets')};
  ${internSql('parties', 'lq_parties')};
  SELECT
    ARRAY(SELECT m.no FROM lq_markets s JOIN markets m ON m.id = s.id ORDER BY s.pos) AS markets,
    ARRAY(SELECT p.no FROM lq_parties s JOIN parties p ON p.id = s.id ORDER BY s.pos) AS parties`;

/**
 * Each order's state, in three statements:
 * - each staged order is looked up once, by its id, with the counted columns
 *   of a stored one kept beside it (`prior_*`), so that the update, the
 *   insert and the counts need no lookup of their own;
 * - orders stored before are updated, never their id columns: they identify
 *   the row, and id_key ends every listing index;
 * - the others are inserted in listing order (created_at, id_key), so that
 *   every index grows at the end of a range;
 * - order_counts changes by +1 for each new state's values and -1 for each
 *   replaced one's; a value whose changes cancel out is not touched.
 * A group holds each order once, so no row is touched twice, and the
 * writer's lock keeps any other writer from storing an order in between.
 * The figures behind the first and third: BENCHMARKS.md, "Figures behind the code".
 */
export const CURRENT_SQL = (() => {
  const value = (c: CurrentField) =>
    c === 'market_no' ? 'm.no' : c === 'party_no' ? 'p.no' : STAGED_KINDS[c] === 'u64' ? `s.${c}::numeric` : `s.${c}`;
  const assigned = CURRENT_FIELDS.filter((c) => !IDENTITY.includes(c));
  const numbered = 'lq_current s JOIN markets m ON m.id = s.market_id JOIN parties p ON p.id = s.party_id';
  const counted = (prefix: string) => COUNTED.map((c) => prefix + c).join(', ');
  return `
    UPDATE lq_current s SET ${COUNTED.map((c) => `prior_${c} = o.${c}`).join(', ')}
    FROM orders_current o WHERE o.id_bytes = s.id_bytes;
    UPDATE orders_current o SET ${assigned.map((c) => `${c} = ${value(c)}`).join(', ')}, last_height = s.last_height::numeric
    FROM ${numbered}
    WHERE s.prior_live IS NOT NULL AND o.id_bytes = s.id_bytes;
    INSERT INTO orders_current (${list(CURRENT_FIELDS)}, last_height)
    SELECT ${CURRENT_FIELDS.map(value).join(', ')}, s.last_height::numeric FROM ${numbered}
    WHERE s.prior_live IS NULL
    ORDER BY s.created_at, s.id_key;
    INSERT INTO order_counts (dimension, value, n)
    SELECT d.dimension, d.value, sum(d.n) FROM (
      SELECT ${counted('')}, 1 AS n FROM lq_current
      UNION ALL
      SELECT ${counted('prior_')}, -1 FROM lq_current WHERE prior_live IS NOT NULL
    ) r (${counted('')}, n) CROSS JOIN LATERAL (VALUES
      ('status', r.status, r.n), ('type', r.type, r.n), ('timeInForce', r.time_in_force, r.n), ('live', r.live::integer, r.n)
    ) AS d (dimension, value, n)
    GROUP BY d.dimension, d.value HAVING sum(d.n) <> 0
    ON CONFLICT (dimension, value) DO UPDATE SET n = order_counts.n + excluded.n`;
})();
/** CURRENT_SQL's result that counts the stored orders it updated, each leaving a dead row in orders_current. */
export const CURRENT_UPDATED_RESULT = 1;

/**
 * The columns of orders_history, in the order of historyBinaryCopy's rows
 * (./copy-binary.ts). A group's history goes straight into the table: its
 * rows are keyed by their blocks' heights, which the writer has just checked
 * are newer than the last stored block, so no row can meet a stored one, and
 * a block holds each (height, seq) and each (order, version) once.
 */
export const HISTORY_COLUMNS = ['height', 'seq', 'id_bytes', 'version', 'market_no', 'party_no', 'message'] as const;

/** The same signature seen again is the same row: the first one stays. */
export const SIGNATURES_SQL = `
  INSERT INTO node_signatures (resource_id, sig, kind, vega_time)
  SELECT resource_id, sig, kind, vega_time FROM lq_signatures ORDER BY seq
  ON CONFLICT DO NOTHING`;

/** Bundles are replaced by signature id: the group's last row of each wins. */
const bundleSql = (table: string, staged: string, columns: readonly string[]) => `
  INSERT INTO ${table} (${list(columns)})
  SELECT DISTINCT ON (signature_id) ${list(columns)} FROM ${staged} ORDER BY signature_id, seq DESC
  ON CONFLICT (signature_id) DO UPDATE SET ${assignAll(columns.filter((c) => c !== 'signature_id'))}`;
export const ADDED_SQL = bundleSql('signer_added', 'lq_added', SIGNER_ADDED_FIELDS);
export const REMOVED_SQL = bundleSql('signer_removed', 'lq_removed', SIGNER_REMOVED_FIELDS);

/** The COPY of rows into a table, text format unless given. */
export const copySql = (table: string, columns: readonly string[], format = 'text') =>
  `COPY ${table} (${list(columns)}) FROM STDIN${format === 'text' ? '' : ` (FORMAT ${format})`}`;
