/**
 * Writes one group of blocks into PostgreSQL in one transaction, with the
 * same semantics as the embedded writer (../sqlite/block-writer.ts): history
 * rows, the current state of each order, the planner's counts, bundles, the
 * blocks and the checkpoint. Rows go to session-local staging tables by COPY
 * and from there into the real tables by a few set-based statements, so the
 * cost per row is PostgreSQL's own, not a round trip's.
 */
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  CURRENT_FIELDS, SIGNER_ADDED_FIELDS, SIGNER_REMOVED_FIELDS, type CurrentField, type PreparedGroup, type SqlValue,
} from '../rows.js';
import { historyBinaryCopy } from './copy-binary.js';
import { CopyText, copyString } from './copy-text.js';

/**
 * Staging tables, one per kind of row, created once per session. ON COMMIT
 * DELETE ROWS empties them at each commit (a failed transaction's rows go with
 * its rollback). `seq` numbers rows in the order COPY reads them: where the
 * group holds a key twice, the later row wins.
 */
const STAGING = `
  CREATE TEMP TABLE lq_history (
    seq BIGINT GENERATED ALWAYS AS IDENTITY, vega_time BIGINT NOT NULL, id_bytes BYTEA NOT NULL, message BYTEA NOT NULL
  ) ON COMMIT DELETE ROWS;
  -- market_no and party_no hold positions in lq_markets and lq_parties.
  CREATE TEMP TABLE lq_current (LIKE orders_current) ON COMMIT DELETE ROWS;
  CREATE TEMP TABLE lq_markets (pos INTEGER NOT NULL, id TEXT NOT NULL) ON COMMIT DELETE ROWS;
  CREATE TEMP TABLE lq_parties (pos INTEGER NOT NULL, id TEXT NOT NULL) ON COMMIT DELETE ROWS;
  CREATE TEMP TABLE lq_signatures (seq BIGINT GENERATED ALWAYS AS IDENTITY, LIKE node_signatures) ON COMMIT DELETE ROWS;
  CREATE TEMP TABLE lq_added (seq BIGINT GENERATED ALWAYS AS IDENTITY, LIKE signer_added) ON COMMIT DELETE ROWS;
  CREATE TEMP TABLE lq_removed (seq BIGINT GENERATED ALWAYS AS IDENTITY, LIKE signer_removed) ON COMMIT DELETE ROWS;
`;

/**
 * Prepares a session to write: its staging tables. A group of catching up
 * stages some tens of MB; temp_buffers (8 MB by default, settable only before
 * the session first touches a temporary table) keeps that in memory.
 */
export async function prepareWriterSession(client: pg.ClientBase): Promise<void> {
  await client.query(`SET temp_buffers = '128MB'`);
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
 * The change each order's new state makes to order_counts: +1 for its new
 * values, -1 for the stored ones it replaces. Runs before the upsert, which
 * overwrites the stored ones. A value whose changes cancel out is not touched.
 * The stored state is looked up order by order (OFFSET 0 keeps the subquery
 * a parameterised index probe): the planner, seeing a staging table it has
 * no statistics for, would otherwise scan all of orders_current.
 */
const COUNTS_SQL = `
  INSERT INTO order_counts (dimension, value, n)
  SELECT d.dimension, d.value, sum(d.n) FROM (
    SELECT s.status, s.type, s.time_in_force, s.live, 1 AS n FROM lq_current s
    UNION ALL
    SELECT o.status, o.type, o.time_in_force, o.live, -1 FROM lq_current s CROSS JOIN LATERAL (
      SELECT c.status, c.type, c.time_in_force, c.live FROM orders_current c WHERE c.id_bytes = s.id_bytes OFFSET 0
    ) o
  ) r CROSS JOIN LATERAL (VALUES
    ('status', r.status, r.n), ('type', r.type, r.n), ('timeInForce', r.time_in_force, r.n), ('live', r.live::integer, r.n)
  ) AS d (dimension, value, n)
  GROUP BY d.dimension, d.value HAVING sum(d.n) <> 0
  ON CONFLICT (dimension, value) DO UPDATE SET n = order_counts.n + excluded.n`;

/**
 * Each order once (a group holds its last state only), its market and party
 * numbered. An update never assigns the id columns: they identify the row, and
 * id_key ends every listing index.
 */
const CURRENT_SQL = (() => {
  const select = CURRENT_FIELDS.map((c) => (c === 'market_no' ? 'm.no' : c === 'party_no' ? 'p.no' : `s.${c}`));
  return `
    INSERT INTO orders_current (${list(CURRENT_FIELDS)})
    SELECT ${select.join(', ')} FROM lq_current s
      JOIN lq_markets sm ON sm.pos = s.market_no JOIN markets m ON m.id = sm.id
      JOIN lq_parties sp ON sp.pos = s.party_no JOIN parties p ON p.id = sp.id
    ON CONFLICT (id_bytes) DO UPDATE SET ${assignAll(CURRENT_FIELDS.filter((c) => !IDENTITY.includes(c)))}`;
})();

/**
 * History staged because it may meet rows it must replace: each block holds an
 * order once, so a (time, id) comes twice only from two blocks with the same
 * time, and then the later state wins, in the group as over a stored row.
 */
const STAGED_HISTORY_SQL = `
  INSERT INTO orders_history (vega_time, id_bytes, message)
  SELECT DISTINCT ON (vega_time, id_bytes) vega_time, id_bytes, message FROM lq_history
  ORDER BY vega_time, id_bytes, seq DESC
  ON CONFLICT (vega_time, id_bytes) DO UPDATE SET message = excluded.message`;

/** The same signature seen again is the same row: the first one stays. */
const SIGNATURES_SQL = `
  INSERT INTO node_signatures (resource_id, sig, kind, vega_time)
  SELECT resource_id, sig, kind, vega_time FROM lq_signatures ORDER BY seq
  ON CONFLICT DO NOTHING`;

/** Bundles are replaced by signature id: the group's last row of each wins. */
const bundleSql = (table: string, staged: string, columns: readonly string[]) => `
  INSERT INTO ${table} (${list(columns)})
  SELECT DISTINCT ON (signature_id) ${list(columns)} FROM ${staged} ORDER BY signature_id, seq DESC
  ON CONFLICT (signature_id) DO UPDATE SET ${assignAll(columns.filter((c) => c !== 'signature_id'))}`;
const ADDED_SQL = bundleSql('signer_added', 'lq_added', SIGNER_ADDED_FIELDS);
const REMOVED_SQL = bundleSql('signer_removed', 'lq_removed', SIGNER_REMOVED_FIELDS);

/**
 * A group turned into what the transaction sends, on the thread that prepared
 * it (while an earlier group commits); its buffers then move to the writer's
 * thread.
 */
export interface EncodedGroup {
  blocks: PreparedGroup['blocks'];
  /**
   * The group's history in binary COPY format. It is copied straight into
   * orders_history when no row of it can meet another (the usual case: block
   * times all differ and none is stored yet), else staged and merged.
   */
  history: Uint8Array | undefined;
  /** COPY statements and their data, in order; tables without rows are left out. */
  copies: { sql: string; data: Uint8Array }[];
  /** The set-based statements that move staged rows into place, each on its own. */
  statements: string[];
  /** The checkpoint: last_block, then COMMIT. */
  checkpoint: string;
}

/** The buffers of an encoded group that can move to another thread rather than be copied. */
export function encodedTransferables(group: EncodedGroup): ArrayBuffer[] {
  const buffers = [group.history, ...group.copies.map((c) => c.data)];
  // A small Buffer may be a slice of Node's shared pool, which must stay where it is.
  return buffers.flatMap((b) => (b !== undefined && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? [b.buffer as ArrayBuffer] : []));
}

function rowsCopy(rows: readonly (readonly SqlValue[])[]): Buffer {
  const text = new CopyText();
  for (const row of rows) text.row(row);
  return text.toBuffer();
}

function idsCopy(ids: readonly string[]): Buffer {
  const text = new CopyText();
  ids.forEach((id, pos) => text.encodedRow(`${pos}\t${copyString(id)}`));
  return text.toBuffer();
}

/** Turns a prepared group into COPY data and statements. */
export function encodeGroup(group: PreparedGroup): EncodedGroup {
  const copies: EncodedGroup['copies'] = [];
  const add = (table: string, columns: readonly string[], data: Buffer) => {
    if (data.byteLength > 0) copies.push({ sql: `COPY ${table} (${list(columns)}) FROM STDIN`, data });
  };
  const statements: string[] = [];
  // Blocks go straight to their table: a stored height is refused before, under the lock.
  const blocks = new CopyText();
  for (const b of group.blocks) blocks.row([b.height, b.hash, b.time]);
  add('blocks', ['height', 'hash', 'time'], blocks.toBuffer());

  if (group.latest.length > 0) {
    add('lq_markets', ['pos', 'id'], idsCopy(group.markets));
    add('lq_parties', ['pos', 'id'], idsCopy(group.parties));
    add('lq_current', CURRENT_FIELDS, rowsCopy(group.latest));
    statements.push(internSql('markets', 'lq_markets'), internSql('parties', 'lq_parties'), COUNTS_SQL, CURRENT_SQL);
  }
  if (group.signatures.length > 0) {
    add('lq_signatures', ['resource_id', 'sig', 'kind', 'vega_time'], rowsCopy(group.signatures));
    statements.push(SIGNATURES_SQL);
  }
  if (group.added.length > 0) {
    add('lq_added', SIGNER_ADDED_FIELDS, rowsCopy(group.added));
    statements.push(ADDED_SQL);
  }
  if (group.removed.length > 0) {
    add('lq_removed', SIGNER_REMOVED_FIELDS, rowsCopy(group.removed));
    statements.push(REMOVED_SQL);
  }
  const { height, time, chainId, hash } = group.last;
  const checkpoint =
    'INSERT INTO last_block (only_row, height, time, chain_id, hash) ' +
    `VALUES (1, ${height}, ${time}, ${pg.escapeLiteral(chainId)}, ${pg.escapeLiteral(hash)}) ` +
    'ON CONFLICT (only_row) DO UPDATE SET ' +
    'height = excluded.height, time = excluded.time, chain_id = excluded.chain_id, hash = excluded.hash;\nCOMMIT';
  const history = group.history.times.length > 0 ? historyBinaryCopy(group.history) : undefined;
  return { blocks: group.blocks, history, copies, statements, checkpoint };
}

const HISTORY_COLUMNS = 'vega_time, id_bytes, message';

/**
 * Can the group's history go straight into orders_history? Only if no two of
 * its blocks share a time and no stored row has one of their times. Asked in
 * the transaction, under the lock: a query run as part of the first round trip.
 */
function historyMeetsStored(group: EncodedGroup): string | undefined {
  const times = new Set(group.blocks.map((b) => b.time));
  if (group.history === undefined || times.size < group.blocks.length) return undefined;
  return `SELECT EXISTS (SELECT 1 FROM orders_history WHERE vega_time = ANY ('{${[...times].join(',')}}'::bigint[])) AS taken`;
}

async function copyIn(client: pg.ClientBase, sql: string, data: Uint8Array): Promise<void> {
  const stream = client.query(copyFrom(sql));
  stream.end(data);
  // 'finish' comes once the server has acknowledged the COPY.
  await finished(stream);
}

/**
 * Writes an encoded group in one transaction on `client`, which nothing else
 * may use meanwhile. Fails, writing nothing, if a block is not newer than the
 * stored last block; that is checked under a lock every writer takes, so no
 * other writer's block can slip in between.
 */
export async function writeGroup(client: pg.ClientBase, group: EncodedGroup): Promise<void> {
  // Set before the first statement: a failure anywhere after BEGIN needs a rollback.
  let open = true;
  try {
    const meets = historyMeetsStored(group);
    // One round trip. EXCLUSIVE: other writers wait here; readers (ACCESS SHARE) never do.
    const results = (await client.query(
      `BEGIN; LOCK TABLE last_block IN EXCLUSIVE MODE; SELECT height::text AS height FROM last_block${meets ? `; ${meets}` : ''}`,
    )) as unknown as pg.QueryResult[];
    const stored = results[2]?.rows[0] as { height: string } | undefined;
    let last = stored === undefined ? undefined : BigInt(stored.height);
    for (const { height } of group.blocks) {
      if (last !== undefined && height <= last) {
        throw new Error(`block ${height} is not newer than the last stored block ${last}`);
      }
      last = height;
    }
    for (const { sql, data } of group.copies) await copyIn(client, sql, data);
    const statements = [...group.statements];
    if (group.history !== undefined) {
      const direct = meets !== undefined && (results[3]?.rows[0] as { taken: boolean } | undefined)?.taken === false;
      await copyIn(client, `COPY ${direct ? 'orders_history' : 'lq_history'} (${HISTORY_COLUMNS}) FROM STDIN (FORMAT binary)`, group.history);
      if (!direct) statements.push(STAGED_HISTORY_SQL);
    }
    // One round trip for the rest; a failing statement skips the ones after it, COMMIT included.
    await client.query([...statements, group.checkpoint].join(';\n'));
    open = false;
  } catch (e) {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
